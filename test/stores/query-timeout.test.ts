// DB_QUERY_TIMEOUT against a lock held from another session (docs/api.md, "What a 503 means"):
// a write blocked past the limit answers 503 within the limit plus a small margin, and the
// database itself cancelled it, so once the lock is released the data is as before; reads of
// other books go on meanwhile; and the connection that timed out never serves a stale or
// stuck answer afterwards: the next requests on the same book answer at once.
import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection, type Connection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../helpers/client/api-client.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';
import { SERVER_STORES, type StoreKind } from '../helpers/stores/dialects.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

const QUERY_TIMEOUT_S = 1;
/** The 503 must come within this (the bound: the limit plus half of it). */
const MAX_TIMEOUT_ANSWER_MS = 1_500;
/**
 * Reads of books nobody locked answer within this while the lock is held. A read queued behind
 * the lock would take the whole limit (1,000 ms) and answer 503; half of it tells the two apart
 * with room for a loaded CI machine (a read once took 262 ms there while other suites ran).
 */
const MAX_FREE_READ_MS = (QUERY_TIMEOUT_S * 1_000) / 2;

/** A session of its own on the test store's database, to hold locks the service runs into. */
interface LockSession {
  /** Holds a row lock on one book (SELECT … FOR UPDATE in an open transaction). */
  lockRow(id: number): Promise<void>;
  /** Holds a lock that blocks inserts into books but not reads. */
  lockTableAgainstWrites(): Promise<void>;
  release(): Promise<void>;
  close(): Promise<void>;
}

async function openLockSession(kind: StoreKind, url: string): Promise<LockSession> {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    return {
      async lockRow(id) {
        await client.query('begin');
        await client.query('select id from books where id = $1 for update', [id]);
      },
      async lockTableAgainstWrites() {
        await client.query('begin');
        // SHARE: every reader goes on, every writer waits.
        await client.query('lock table books in share mode');
      },
      release: async () => void (await client.query('rollback')),
      close: () => client.end(),
    };
  }
  const connection: Connection = await createConnection({ uri: url });
  return {
    async lockRow(id) {
      await connection.query('start transaction');
      await connection.query('select id from books where id = ? for update', [id]);
    },
    async lockTableAgainstWrites() {
      // READ: every session may read books, none may write them.
      await connection.query('lock tables books read');
    },
    async release() {
      await connection.query('rollback');
      await connection.query('unlock tables');
    },
    close: () => connection.end(),
  };
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

forEachStore((kind) => {
  describe(`DB_QUERY_TIMEOUT=${QUERY_TIMEOUT_S} and a lock held from another session`, () => {
    let service: InProcessService;
    let client: ApiClient;
    let token: string;
    let session: LockSession;

    beforeAll(async () => {
      service = await startService({ kind: kind, env: { DB_QUERY_TIMEOUT: String(QUERY_TIMEOUT_S), LOG_LEVEL: 'warn' } });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
      session = await openLockSession(kind, service.testStore.directUrl ?? service.testStore.url);
    });
    afterAll(async () => {
      await session?.close();
      await service?.stop();
    });

    /** GETs of `id` while the lock is held: each must answer 200 within MAX_FREE_READ_MS. */
    async function readWhileLocked(id: number, until: Promise<unknown>): Promise<number[]> {
      const times: number[] = [];
      let done = false;
      void until.finally(() => (done = true));
      while (!done) {
        const { value, ms } = await timed(() => client.request('GET', `/book/${id}`, { token }));
        expect(value.status, value.text).toBe(200);
        times.push(ms);
        await sleep(50);
      }
      return times;
    }

    /** The next 100 requests on the book answer 200 (no connection left stuck or stale). */
    async function expectBookServedAgain(id: number, title: string) {
      for (let round = 0; round < 100; round += 1) {
        const response =
          round % 4 === 3
            ? await client.request('PUT', `/book/${id}`, { token, body: { title } })
            : await client.request('GET', `/book/${id}`, { token });
        expect(response.status, `request ${round + 1}: ${response.text}`).toBe(200);
        expect((response.body.data as { title: string }).title).toBe(title);
      }
    }

    it('a PUT on a locked row answers 503 within the limit and changes nothing; other books are read meanwhile', async () => {
      const locked = await client.createBook(token, { title: 'Locked row', author: 'Timeout', year: 2001 });
      const other = await client.createBook(token, { title: 'Free row', author: 'Timeout', year: 2002 });
      await session.lockRow(locked.id);
      try {
        const put = timed(() => client.request('PUT', `/book/${locked.id}`, { token, body: { title: 'Changed after all' } }));
        const readTimes = await readWhileLocked(other.id, put);
        const { value: response, ms } = await put;
        expect(response.status, response.text).toBe(503);
        expect(response.body).toEqual({ status: 503, message: 'Service unavailable', data: null });
        expect(ms).toBeLessThan(MAX_TIMEOUT_ANSWER_MS);
        expect(Math.max(...readTimes)).toBeLessThan(MAX_FREE_READ_MS);
      } finally {
        await session.release();
      }
      // Had the statement gone on waiting on the server, it would now take the released lock.
      await sleep(500);
      const after = await client.request('GET', `/book/${locked.id}`, { token });
      expect((after.body.data as { title: string }).title).toBe('Locked row');
      await expectBookServedAgain(locked.id, 'Locked row');
    });

    it('POSTs blocked by a table lock answer 503 within the limit and write nothing; reads go on meanwhile', async () => {
      const other = await client.createBook(token, { title: 'Readable', author: 'Timeout', year: 2003 });
      const before = await client.request('GET', '/books', { token });
      await session.lockTableAgainstWrites();
      try {
        // Two at once: on PostgreSQL they share one INSERT.
        const posts = timed(() =>
          Promise.all(
            [1, 2].map((n) => client.request('POST', '/book', { token, body: { title: `Blocked ${n}`, author: 'Timeout', year: 2004 } })),
          ),
        );
        const readTimes = await readWhileLocked(other.id, posts);
        const { value: responses, ms } = await posts;
        for (const response of responses) expect(response.status, response.text).toBe(503);
        expect(ms).toBeLessThan(MAX_TIMEOUT_ANSWER_MS);
        expect(Math.max(...readTimes)).toBeLessThan(MAX_FREE_READ_MS);
      } finally {
        await session.release();
      }
      await sleep(500);
      const after = await client.request('GET', '/books', { token });
      expect(after.body.data).toEqual(before.body.data);
      await expectBookServedAgain(other.id, 'Readable');
    });
  });
// PostgreSQL and MySQL only: SQLite runs each statement as a synchronous call on one connection
// (no pool to wait for, nothing to cancel), and waits for another process's lock by its busy
// timeout, not DB_QUERY_TIMEOUT.
}, SERVER_STORES);

forEachStore((kind) => {
  describe(`DB_QUERY_TIMEOUT=${QUERY_TIMEOUT_S} bounds the wait for a pooled connection (DB_POOL_MAX=1)`, () => {
    let service: InProcessService;
    let client: ApiClient;
    let token: string;
    let session: LockSession;

    beforeAll(async () => {
      service = await startService({ kind: kind, env: { DB_QUERY_TIMEOUT: String(QUERY_TIMEOUT_S), DB_POOL_MAX: '1', LOG_LEVEL: 'warn' } });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
      session = await openLockSession(kind, service.testStore.directUrl ?? service.testStore.url);
    });
    afterAll(async () => {
      await session?.close();
      await service?.stop();
    });

    it('five DELETEs of a locked row, one connection: each answers 503 within the wait plus its own statement, none waits for the others in turn; the book stays', async () => {
      const locked = await client.createBook(token, { title: 'One connection', author: 'Timeout', year: 2005 });
      await session.lockRow(locked.id);
      try {
        const answers = await Promise.all(
          Array.from({ length: 5 }, () => timed(() => client.request('DELETE', `/book/${locked.id}`, { token }))),
        );
        // A DELETE that gets the connection just before its wait ends then runs into the lock
        // itself: at most the wait plus the statement's limit (and a margin for a loaded
        // machine). Served in turn, the fifth would wait 4 s first; without a bound, forever.
        for (const { value, ms } of answers) {
          expect(value.status, value.text).toBe(503);
          expect(ms).toBeLessThan(2 * QUERY_TIMEOUT_S * 1000 + 1_000);
        }
      } finally {
        await session.release();
      }
      await sleep(300);
      const after = await client.request('GET', `/book/${locked.id}`, { token });
      expect(after.status, after.text).toBe(200);
    });
  });
// PostgreSQL and MySQL only: SQLite runs each statement as a synchronous call on one connection
// (no pool to wait for, nothing to cancel), and waits for another process's lock by its busy
// timeout, not DB_QUERY_TIMEOUT.
}, SERVER_STORES);
