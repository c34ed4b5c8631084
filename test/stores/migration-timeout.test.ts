// Migrations are not cut by DB_QUERY_TIMEOUT (they have DB_MIGRATION_TIMEOUT, and connections
// of their own): an instance whose migrations wait for a lock held elsewhere (here the
// migrator's own lock, held from another session) starts once the lock is released, and a
// second instance started afterwards is up within 5 s: nothing the first one took is left
// behind. Before, the migration was cut at DB_QUERY_TIMEOUT and left PostgreSQL's advisory lock
// on an idle pooled connection, and the next instance could not start.
import { setTimeout as sleep } from 'node:timers/promises';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { killAllChildServices, startService } from '../helpers/service/start-service.js';
import { SERVER_STORES, type StoreKind } from '../helpers/stores/dialects.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** Kysely's migrator takes this lock before it migrates (kysely/dist/esm/dialect/<kind>/<kind>-adapter.js). */
const POSTGRES_MIGRATION_LOCK = '3853314791062309107';
const MYSQL_MIGRATION_LOCK = 'ea586330-2c93-47c8-908d-981d9d270f9d';
const QUERY_TIMEOUT_S = 1;
const BLOCKED_MS = 3_000;

/** Whether any session (an idle pooled connection, say) still holds the migrator's lock. */
async function migrationLockHeld(kind: StoreKind, url: string): Promise<boolean> {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{ held: string }>(
        "select count(*) as held from pg_locks where locktype = 'advisory' and database = (select oid from pg_database where datname = current_database())",
      );
      return Number(rows[0]?.held) > 0;
    } finally {
      await client.end();
    }
  }
  // MySQL's named locks are server-wide, and other test files migrate stores of their own on
  // the same server at the same time: only a holder connected to this store's database counts.
  const connection = await createConnection({ uri: url });
  try {
    const [rows] = await connection.query(
      `select count(*) as held from information_schema.processlist where id = is_used_lock('${MYSQL_MIGRATION_LOCK}') and db = database()`,
    );
    return Number((rows as { held: number | string }[])[0]?.held) > 0;
  } finally {
    await connection.end();
  }
}

/** Holds the migrator's lock from a session of its own until released. */
async function holdMigrationLock(kind: StoreKind, url: string): Promise<() => Promise<void>> {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`select pg_advisory_lock(${POSTGRES_MIGRATION_LOCK})`);
    return () => client.end();
  }
  const connection = await createConnection({ uri: url });
  const [rows] = await connection.query(`select get_lock('${MYSQL_MIGRATION_LOCK}', 5) as taken`);
  expect((rows as { taken: number }[])[0]?.taken).toBe(1);
  return () => connection.end();
}

forEachStore((kind) => {
  describe('a migration blocked past DB_QUERY_TIMEOUT', () => {
    let store: TestStore;
    afterAll(async () => {
      await killAllChildServices();
      await store?.drop();
    });

    it('completes once unblocked; a second instance started afterwards starts within 5 s', async () => {
      store = await createTestStore(kind);
      const release = await holdMigrationLock(kind, store.directUrl ?? store.url);
      const env = { DB_QUERY_TIMEOUT: String(QUERY_TIMEOUT_S), DB_CONNECT_TIMEOUT: '20', LOG_LEVEL: 'info' };
      const first = startService({ childProcess: true, dbUrl: store.url, env, startTimeoutMs: 20_000 });
      try {
        await sleep(BLOCKED_MS);
      } finally {
        await release();
      }
      const firstService = await first;
      expect(firstService.alive()).toBe(true);
      expect(firstService.process.stdout()).toMatch(/migration applied/);
      // Not cut and started over: it waited for the lock, on its own time limit.
      expect(firstService.process.stdout()).not.toMatch(/failed halfway/);
      expect(await migrationLockHeld(kind, store.directUrl ?? store.url)).toBe(false);

      const started = performance.now();
      const second = await startService({ childProcess: true, dbUrl: store.url, env, startTimeoutMs: 5_000 });
      expect(performance.now() - started).toBeLessThan(5_000);
      const health = await fetch(`${second.baseUrl}/readyz`);
      expect(health.status).toBe(200);
    });
  });
// PostgreSQL and MySQL only: SQLite migrates on its one connection, with no query limit to cut it.
}, SERVER_STORES);
