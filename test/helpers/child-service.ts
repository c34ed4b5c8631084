// The built service (dist/main.js) as a child process on a free port, for tests that need a
// real process: signals, several instances, store outages. Every child started here is
// tracked, so a suite's afterAll can kill whatever is left (`killAllChildServices`).
import { freePort } from './infra/free-port.js';
import { spawnService, waitUntilAnswering, type ServiceProcess } from './process.js';
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from './client/test-account.js';

export interface ChildService {
  baseUrl: string;
  port: number;
  process: ServiceProcess;
  /** True while the process has not exited. */
  alive(): boolean;
  /**
   * Throws, with the exit code and everything the process wrote to stderr, when the process
   * has exited; `when` says in which phase of the test.
   */
  assertAlive(when: string): Promise<void>;
  /** Sends `signal`, waits for the exit (SIGKILL after `timeoutMs`) and returns the exit code or signal. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
}

export interface ChildServiceOptions {
  dbUrl: string;
  /** Extra environment (DB_QUERY_TIMEOUT, DB_CONNECT_TIMEOUT, …). */
  env?: Record<string, string>;
  cwd?: string;
  /** Wait until the service answers HTTP (default true). */
  waitUntilUp?: boolean;
  /** How long to wait for it to answer (default 15 s). */
  startTimeoutMs?: number;
  port?: number;
}

const children = new Set<ChildService>();

export async function startChildService(options: ChildServiceOptions): Promise<ChildService> {
  const port = options.port ?? (await freePort());
  const baseUrl = `http://127.0.0.1:${port}`;
  const spawned = spawnService(
    {
      SECRET_TOKEN: TEST_SECRET,
      AUTH_USERNAME: TEST_USERNAME,
      AUTH_PASSWORD: TEST_PASSWORD,
      DB_URL: options.dbUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      LOGIN_RATE_LIMIT: '0',
      ...options.env,
    },
    options.cwd ?? process.cwd(),
  );
  const child: ChildService = {
    baseUrl,
    port,
    process: spawned,
    alive: () => spawned.child.exitCode === null && spawned.child.signalCode === null,
    async assertAlive(when: string) {
      if (child.alive()) return;
      const code = await spawned.exited;
      // stderr may still be in flight when 'exit' fires.
      await new Promise<void>((resolve) => (spawned.child.stderr?.readableEnded ? resolve() : spawned.child.stderr?.once('close', () => resolve())));
      throw new Error(`the service process exited (${code}) ${when}; stderr:\n${spawned.stderr()}`);
    },
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (child.alive()) {
        spawned.child.kill(signal);
        const timer = setTimeout(() => spawned.child.kill('SIGKILL'), timeoutMs);
        try {
          return await spawned.exited;
        } finally {
          clearTimeout(timer);
          children.delete(child);
        }
      }
      children.delete(child);
      return spawned.exited;
    },
  };
  children.add(child);
  if (options.waitUntilUp ?? true) await waitUntilAnswering(baseUrl, spawned, options.startTimeoutMs ?? 15_000);
  return child;
}

/** SIGKILLs every child service still running (for afterAll / finally). */
export async function killAllChildServices(): Promise<void> {
  await Promise.all([...children].map((child) => child.stop('SIGKILL', 5_000)));
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
