// Starts the real service with the entry point's own startServer(), listening on a free port
// over a fresh store.
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer } from '../../src/server.js';
import type { BookStore } from '../../src/store/book-store.js';
import type { App } from '../../src/http/types.js';
import { ApiClient } from './client/api-client.js';
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from './client/test-account.js';
import { createTestStore, type TestStore } from './stores/test-store.js';
import type { StoreKind } from './stores/dialects.js';


export interface RunningService {
  kind: StoreKind;
  baseUrl: string;
  app: App;
  store: BookStore;
  testStore: TestStore;
  /** Every log line the service wrote, as text. */
  logs: string[];
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The DB_URL to use, from the fresh test store's own (e.g. a multi-host URL around it). */
  dbUrl?: (testStoreUrl: string) => string;
}

export async function startService(
  kind: StoreKind,
  env: Record<string, string> = {},
  options: StartOptions = {},
): Promise<RunningService> {
  const testStore = await createTestStore(kind);
  const config = loadConfig(
    {
      SECRET_TOKEN: TEST_SECRET,
      AUTH_USERNAME: TEST_USERNAME,
      AUTH_PASSWORD: TEST_PASSWORD,
      DB_URL: options.dbUrl ? options.dbUrl(testStore.url) : testStore.url,
      LOG_LEVEL: 'info',
      HOST: '127.0.0.1',
      PORT: '0',
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
  const server = await startServer(config, createLogger(config.logLevel, sink));
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

/**
 * Registers beforeAll/afterAll that start one service for the enclosing describe block.
 * Read `.current` inside tests.
 */
export function useService(kind: StoreKind, env: Record<string, string> = {}) {
  const handle: { current: RunningService; client: ApiClient } = {} as never;
  beforeAll(async () => {
    handle.current = await startService(kind, env);
    handle.client = new ApiClient(handle.current.baseUrl);
  });
  afterAll(async () => {
    await handle.current?.stop();
  });
  return handle;
}
