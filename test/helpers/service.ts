// Starts the real service with the entry point's own startServer(), listening on a free port
// over a fresh store, and talks to it over real HTTP.
import { Writable } from 'node:stream';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startServer } from '../../src/server.js';
import type { BookStore } from '../../src/store/book-store.js';
import type { App } from '../../src/http/types.js';
import { machineryEnv } from './node-http.js';
import { createTestStore, type StoreKind, type TestStore } from './stores.js';

export const TEST_SECRET = 'test-secret-that-is-at-least-32-bytes-long!';
export const TEST_USERNAME = 'admin';
export const TEST_PASSWORD = 'password';

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
      ...machineryEnv,
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

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON (ids above 2^53 lose digits here: read `text` for exact ids). */
  body: { status: number; message: string; data: unknown } & Record<string, unknown>;
}

export interface RequestOptions {
  /** An object is sent as JSON with Content-Type application/json; a string is sent as is. */
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
}

export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = options.token;
    let body: string | undefined;
    if (typeof options.body === 'string') {
      body = options.body;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: ApiResponse['body'];
    try {
      parsed = text === '' ? (undefined as never) : JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: response is not JSON (HTTP ${response.status}): ${text.slice(0, 200)}`);
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  /** Logs in with the test account; the token. */
  async token(): Promise<string> {
    const response = await this.request('POST', '/token', {
      body: { username: TEST_USERNAME, password: TEST_PASSWORD },
    });
    if (response.status !== 200) throw new Error(`login failed: ${response.text}`);
    return (response.body.data as { token: string }).token;
  }

  async createBook(token: string, book: { title: string; author: string; year: number }) {
    const response = await this.request('POST', '/book', { token, body: book });
    if (response.status !== 201) throw new Error(`create failed: ${response.text}`);
    return response.body.data as { id: number; title: string; author: string; year: number };
  }
}

/** A token from the service at `baseUrl`, with the test account (the one login helper). */
export function login(baseUrl: string): Promise<string> {
  return new ApiClient(baseUrl).token();
}
