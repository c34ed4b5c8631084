// The built service (dist/main.js) as a child process on a free port, for tests that need a
// real process: signals, several instances, store outages. Every child started here is
// tracked, so a suite's afterAll can kill whatever is left (`killAllChildServices`).
// Also: HTTP attempts that never throw, recording status, body, time and transport errors.
import { freePort, spawnService, waitUntilAnswering, type ServiceProcess } from './process.js';
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from './service.js';

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

export interface Outcome {
  method: string;
  path: string;
  /** Date.now() when the request was sent and when its outcome was known. */
  startedAt: number;
  endedAt: number;
  /** HTTP status; undefined when the request failed below HTTP. */
  status?: number;
  text?: string;
  body?: { status: number; message: string; data: unknown };
  contentType?: string | null;
  /** Transport failure (connection refused, reset, closed): the cause's code and message. */
  error?: string;
  errorCode?: string;
}

/** One HTTP request that never throws: its outcome, whatever it is. */
export async function attempt(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Outcome> {
  const startedAt = Date.now();
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = options.token;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await response.text();
    let body: Outcome['body'];
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      text,
      body,
      contentType: response.headers.get('content-type'),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      error: `${(error as Error).name}: ${(error as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
      errorCode: cause?.code ?? (error as Error).name,
    };
  }
}

/** A short, readable line for an outcome, for failure messages. */
export function describeOutcome(outcome: Outcome): string {
  const took = outcome.endedAt - outcome.startedAt;
  const what = outcome.error ?? `HTTP ${outcome.status} ${outcome.text?.slice(0, 200)}`;
  return `${outcome.method} ${outcome.path} (+${took} ms): ${what}`;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
