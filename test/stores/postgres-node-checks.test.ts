// The PostgreSQL node in use, watched (docs/scaling-out.md, target_session_attrs), over a
// private cluster the test reconfigures and the built service as a child process:
//   - a primary fenced read-only without a restart (ALTER SYSTEM default_transaction_read_only
//     and a reload: the open connections stay open and keep reading) is noticed within 2 s
//     by an instance with target_session_attrs=read-write: its pooled connections are closed
//     and it stops serving from that node (503: no node qualifies), and serves again once the
//     fence is lifted;
//   - connections killed by the server (pg_terminate_backend) are logged as their code and
//     message: no log line over 2 KB (pg's errors can drag the whole client object along).
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import pg from 'pg';
import { attempt, describeOutcome } from '../helpers/client/attempt.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { waitFor } from '../helpers/client/failover.js';
import { createPrivatePostgres, type PrivatePostgres } from '../helpers/infra/postgres-cluster.js';
import { login } from '../helpers/client/api-client.js';
import { describeIf } from '../helpers/requirements.js';

/** How soon a fenced node must be noticed (the bound). */
const NOTICE_LIMIT_MS = 2_000;
const MAX_LOG_LINE_BYTES = 2_048;

// Requirement: it runs a private PostgreSQL cluster; skipped (reason printed) only outside CI where PostgreSQL's server binaries are missing.
describeIf('pg-binaries')('the PostgreSQL node in use, watched (private cluster)', () => {
  let cluster: PrivatePostgres;
  let databaseUrl: string;
  let service: ChildService;
  let token: string;
  let bookId: number;

  async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  }

  async function fence(readOnly: boolean) {
    await admin(async (client) => {
      await client.query(readOnly ? 'alter system set default_transaction_read_only = on' : 'alter system reset default_transaction_read_only');
      await client.query('select pg_reload_conf()');
    });
  }

  beforeAll(async () => {
    cluster = await createPrivatePostgres();
    await cluster.start();
    databaseUrl = await cluster.createDatabase('books_watched');
    service = await startService({
      childProcess: true,
      dbUrl: `${databaseUrl}?target_session_attrs=read-write`,
      env: { LOG_LEVEL: 'info', DB_QUERY_TIMEOUT: '2' },
    });
    token = await login(service.baseUrl);
    const created = await attempt(service.baseUrl, 'POST', '/book', { token, body: { title: 'Watched', author: 'Node', year: 2015 } });
    expect(created.status, describeOutcome(created)).toBe(201);
    bookId = (created.body as { data: { id: number } }).data.id;
  }, 90_000);

  afterAll(async () => {
    await killAllChildServices();
    await cluster?.destroy();
  }, 60_000);

  it(`a primary fenced read-only without a restart is noticed within ${NOTICE_LIMIT_MS / 1000} s; the service serves again once it is writable`, async () => {
    // Several pooled connections, all open when the fence comes.
    for (let round = 0; round < 5; round += 1) {
      const reads = await Promise.all(Array.from({ length: 8 }, () => attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token })));
      for (const read of reads) expect(read.status, describeOutcome(read)).toBe(200);
    }
    await fence(true);
    const fencedAt = performance.now();
    try {
      const noticedAfter = await waitFor(
        async () => {
          const read = await attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token });
          return read.status === 503 ? performance.now() - fencedAt : undefined;
        },
        NOTICE_LIMIT_MS + 3_000,
        () => 'the read-only node was never noticed: GETs kept answering 200 from it',
        50,
      );
      expect(noticedAfter).toBeLessThan(NOTICE_LIMIT_MS + 500);
      // Noticed for good: no pooled connection to it serves again.
      for (let read = 0; read < 20; read += 1) {
        const outcome = await attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token });
        expect(outcome.status, describeOutcome(outcome)).toBe(503);
      }
      expect(service.process.stdout()).toMatch(/is read-only: its connections are closed/);
    } finally {
      await fence(false);
    }
    await waitFor(
      async () => ((await attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token })).status === 200 ? true : undefined),
      10_000,
      () => 'the service did not serve again once the node was writable',
    );
  });

  it(`connections the server kills are logged as code and message: no log line over ${MAX_LOG_LINE_BYTES} bytes`, async () => {
    const reads = await Promise.all(Array.from({ length: 8 }, () => attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token })));
    for (const read of reads) expect(read.status, describeOutcome(read)).toBe(200);
    const killed = await admin(async (client) => {
      const { rows } = await client.query<{ killed: boolean }>(
        "select pg_terminate_backend(pid) as killed from pg_stat_activity where datname = 'books_watched' and pid <> pg_backend_pid()",
      );
      return rows.filter((row) => row.killed).length;
    });
    expect(killed).toBeGreaterThan(0);
    await sleep(300);
    // Requests that find their connection gone, then new ones.
    for (let round = 0; round < 5; round += 1) {
      await Promise.all(Array.from({ length: 8 }, () => attempt(service.baseUrl, 'GET', `/book/${bookId}`, { token })));
    }
    const lines = `${service.process.stdout()}\n${service.process.stderr()}`.split('\n');
    const lost = lines.filter((line) => /PostgreSQL connection failed|store unavailable/.test(line));
    expect(lost.length, 'the lost connections are logged').toBeGreaterThan(0);
    const long = lines.filter((line) => Buffer.byteLength(line) > MAX_LOG_LINE_BYTES);
    expect(long.map((line) => `${Buffer.byteLength(line)} bytes: ${line.slice(0, 300)}…`)).toEqual([]);
  });
});
