// The one way tests start the service: startService(options).
//  - In this process (the default): the entry point's own startServer() over a fresh store of
//    `kind`, on a free port; the test can reach the app, the store and every log line.
//  - In a child process (`childProcess: true`): the built entry point (dist/main.js), for what
//    needs a process of its own: signals, WORKERS, exit codes, stdout, several instances on one
//    store, store outages. Every child is tracked, so a suite's afterAll can kill whatever is
//    left (killAllChildServices).
// useService() starts one in-process service for a describe block (beforeAll/afterAll).
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { createLogger } from '../../../src/logger.js';
import { startServer } from '../../../src/server.js';
import type { BookStore } from '../../../src/store/book-store.js';
import type { App } from '../../../src/http/types.js';
import { ApiClient } from '../client/api-client.js';
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from '../client/test-account.js';
import { freePort } from '../infra/free-port.js';
import { loadFastPathsFor, switchesEnv } from '../node-http.js';
import type { StoreKind } from '../stores/dialects.js';
import { createTestStore, type TestStore } from '../stores/test-store.js';
import { spawnMain, waitUntilAnswering, type ServiceProcess } from './main-process.js';

export interface InProcessOptions {
  childProcess?: false;
  /** The store: a fresh, empty one of this kind, dropped by stop(). */
  kind: StoreKind;
  /** Settings on top of the test ones (the test account, HOST 127.0.0.1, PORT 0, LOG_LEVEL info). */
  env?: Record<string, string>;
  /** The DB_URL to use, from the fresh test store's own (e.g. a multi-host URL around it). */
  dbUrlFrom?: (testStoreUrl: string) => string;
}

export interface ChildProcessOptions {
  childProcess: true;
  /** DB_URL: a store the test made. Omitted: whatever `env` (or a .env file in `cwd`) says. */
  dbUrl?: string;
  /**
   * Settings on top of the test ones (the test account, HOST 127.0.0.1, a free PORT, LOG_LEVEL
   * warn, LOGIN_RATE_LIMIT 0); an undefined value leaves a variable out.
   */
  env?: Record<string, string | undefined>;
  /**
   * False: exactly `env`, no test settings, for the tests of startup itself (a missing setting, a
   * .env file in `cwd`); give `port` to wait until it answers there. Default true.
   */
  testSettings?: boolean;
  /** Working directory (default the project's). */
  cwd?: string;
  /** Wait until the service answers HTTP (default true). */
  waitUntilUp?: boolean;
  /** How long to wait for it to answer (default 15 s). */
  startTimeoutMs?: number;
  /** Its PORT with the test settings (default a free one); without them, where `env` or .env makes it listen. */
  port?: number;
}

export interface InProcessService {
  kind: StoreKind;
  baseUrl: string;
  app: App;
  store: BookStore;
  testStore: TestStore;
  /** Every log line the service wrote, as text. */
  logs: string[];
  /** Stops the service and drops its store. */
  stop(): Promise<void>;
}

export interface ChildService {
  /** '' and 0 for a service started without the test settings and without `port`. */
  baseUrl: string;
  port: number;
  process: ServiceProcess;
  /** True while the process has not exited. */
  alive(): boolean;
  /** Waits until it answers HTTP (default 15 s), for a service started with `waitUntilUp: false`. */
  waitUntilUp(timeoutMs?: number): Promise<void>;
  /**
   * Throws, with the exit code and everything the process wrote to stderr, when the process
   * has exited; `when` says in which phase of the test.
   */
  assertAlive(when: string): Promise<void>;
  /** Sends `signal`, waits for the exit (SIGKILL after `timeoutMs`) and returns the exit code or signal. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | string>;
}

export function startService(options: InProcessOptions): Promise<InProcessService>;
export function startService(options: ChildProcessOptions): Promise<ChildService>;
export function startService(options: InProcessOptions | ChildProcessOptions): Promise<InProcessService | ChildService> {
  return options.childProcess ? startChild(options) : startInProcess(options);
}

/**
 * Registers beforeAll/afterAll that start one in-process service for the enclosing describe
 * block. Read `.current` and `.client` inside tests.
 */
export function useService(kind: StoreKind, env: Record<string, string> = {}) {
  const handle: { current: InProcessService; client: ApiClient } = {} as never;
  beforeAll(async () => {
    handle.current = await startService({ kind, env });
    handle.client = new ApiClient(handle.current.baseUrl);
  });
  afterAll(async () => {
    await handle.current?.stop();
  });
  return handle;
}

const TEST_ACCOUNT = { SECRET_TOKEN: TEST_SECRET, AUTH_USERNAME: TEST_USERNAME, AUTH_PASSWORD: TEST_PASSWORD };

async function startInProcess({ kind, env = {}, dbUrlFrom }: InProcessOptions): Promise<InProcessService> {
  const testStore = await createTestStore(kind);
  const config = loadConfig(
    {
      ...TEST_ACCOUNT,
      DB_URL: dbUrlFrom ? dbUrlFrom(testStore.url) : testStore.url,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
      ...switchesEnv,
      ...env,
    },
    process.cwd(),
  );
  const logs: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(String(chunk));
      callback();
    },
  });
  const server = await startServer(config, createLogger(config.logLevel, sink), { fastPaths: await loadFastPathsFor(config.fastPaths) });
  return {
    kind,
    baseUrl: server.url,
    app: server.app,
    store: server.store,
    testStore,
    logs,
    async stop() {
      await server.stop();
      await testStore.drop();
    },
  };
}

const children = new Set<ChildService>();

async function startChild(options: ChildProcessOptions): Promise<ChildService> {
  const testSettings = options.testSettings ?? true;
  const port = options.port ?? (testSettings ? await freePort() : undefined);
  const waitUntilUp = options.waitUntilUp ?? true;
  if (waitUntilUp && port === undefined) throw new Error('startService: give `port` to wait for a service started without the test settings');
  const baseUrl = port === undefined ? '' : `http://127.0.0.1:${port}`;
  const settings = testSettings ? { ...TEST_ACCOUNT, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', LOGIN_RATE_LIMIT: '0' } : {};
  const dbUrl = options.dbUrl === undefined ? {} : { DB_URL: options.dbUrl };
  const spawned = spawnMain({ ...settings, ...dbUrl, ...options.env }, options.cwd ?? process.cwd());
  const child: ChildService = {
    baseUrl,
    port: port ?? 0,
    process: spawned,
    alive: () => spawned.child.exitCode === null && spawned.child.signalCode === null,
    waitUntilUp: (timeoutMs = 15_000) => waitUntilAnswering(baseUrl, spawned, timeoutMs),
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
  if (waitUntilUp) await child.waitUntilUp(options.startTimeoutMs);
  return child;
}

/** SIGKILLs every child service still running (for afterAll / finally). */
export async function killAllChildServices(): Promise<void> {
  await Promise.all([...children].map((child) => child.stop('SIGKILL', 5_000)));
}
