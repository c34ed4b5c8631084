// A fresh, empty store for a test: a SQLite file, or a database on the shared PostgreSQL or
// MySQL server (TEST_POSTGRES_URL, TEST_MYSQL_URL), or, while a `galera` copy of a suite runs
// (for-each-store.ts), a database on the shared Galera cluster the global setup starts.
// Also: admin connections to those servers, and SQL run in a test store's own database.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { inject } from 'vitest';
import type { StoreSettings } from '../../../src/store/open-store.js';
import { describeStoreUrl, parseStoreUrl } from '../../../src/store/store-url.js';
import type { StoreKind } from './dialects.js';
import { openSqlite } from './sqlite.js';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

export interface TestStore {
  kind: StoreKind;
  /** DB_URL for the service. */
  url: string;
  /** The one host tests reach the database on directly when `url` lists several (Galera). */
  directUrl?: string;
  /** Drops the database (or deletes the file). */
  drop(): Promise<void>;
}

function uniqueName(): string {
  return `books_test_${process.pid}_${randomBytes(4).toString('hex')}`;
}

function withDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function createTestStore(kind: StoreKind): Promise<TestStore> {
  if (kind === 'mysql' && galeraCopyRunning) return createGaleraStore();
  switch (kind) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), 'books-test-'));
      return {
        kind,
        url: `sqlite:${join(dir, 'books.db')}`,
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    case 'postgres':
      // `with (force)`: connections still open to it (a service's pool) do not block the drop.
      return createServerDatabase(kind, POSTGRES_ADMIN_URL, (sql) => withPostgresAdmin((client) => client.query(sql)), ' with (force)');
    case 'mysql':
      return createServerDatabase(kind, MYSQL_ADMIN_URL, (sql) => withMysqlAdmin((connection) => connection.query(sql)), '');
  }
}

/** A new database on a shared server; `asAdmin` runs one statement there as its admin. */
async function createServerDatabase(kind: StoreKind, adminUrl: string, asAdmin: (sql: string) => Promise<unknown>, dropOptions: string): Promise<TestStore> {
  const name = uniqueName();
  await asAdmin(`create database ${name}`);
  return {
    kind,
    url: withDatabase(adminUrl, name),
    drop: async () => {
      await asAdmin(`drop database if exists ${name}${dropOptions}`);
    },
  };
}

export async function withPostgresAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export async function withMysqlAdmin<T>(work: (connection: Awaited<ReturnType<typeof createConnection>>) => Promise<T>): Promise<T> {
  const connection = await createConnection({ uri: MYSQL_ADMIN_URL, connectTimeout: 3000 });
  try {
    return await work(connection);
  } finally {
    await connection.end();
  }
}

/** The settings openStore() takes for a test store, as the service would derive them from DB_URL. */
export function testStoreSettings(testStore: TestStore, { timeoutMs, poolMax }: { timeoutMs: number; poolMax: number }): StoreSettings {
  return {
    target: parseStoreUrl(testStore.url, process.cwd()),
    description: describeStoreUrl(testStore.url),
    connectTimeoutMs: timeoutMs,
    queryTimeoutMs: timeoutMs,
    poolMax,
  };
}

/** Runs SQL in a test store's own database (the one the service uses), over a fresh connection. */
export async function execInTestStore(testStore: TestStore, statement: string): Promise<void> {
  switch (testStore.kind) {
    case 'sqlite': {
      const db = openSqlite(testStore.url.replace(/^sqlite:/, ''));
      try {
        db.exec(statement);
      } finally {
        db.close();
      }
      return;
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: testStore.url });
      await client.connect();
      try {
        await client.query(statement);
      } finally {
        await client.end();
      }
      return;
    }
    case 'mysql': {
      const connection = await createConnection({ uri: testStore.directUrl ?? testStore.url });
      try {
        await connection.query(statement);
      } finally {
        await connection.end();
      }
    }
  }
}

// ---- galera: the MySQL suites once more, on the private 3-node Galera cluster that the global
// setup starts (test/global-setup.ts). The suite sees kind 'mysql' (it is MySQL's dialect); its
// stores are databases on the cluster, and the service's DB_URL lists all three nodes, starting
// with a different one for each store so the suites spread over the nodes.

/** True while a `galera` copy of a suite runs (suites in one file run one after the other). */
let galeraCopyRunning = false;
/** Set by forEachStore around a `galera` copy: the stores created meanwhile are on the cluster. */
export function setGaleraCopyRunning(running: boolean): void {
  galeraCopyRunning = running;
}
let galeraStoreCount = 0;
/** How long a worker waits for the cluster the global setup starts in the background. */
const GALERA_WAIT_MS = 90_000;

/** Undefined when the global setup provided a shared Galera cluster, else why not. */
export function sharedGaleraUnavailable(): string | undefined {
  const shared = inject('sharedGalera');
  if (shared === undefined) return 'a Galera cluster: the global setup (test/global-setup.ts) provided none';
  return 'unavailable' in shared ? `a private MariaDB Galera cluster: ${shared.unavailable}` : undefined;
}

async function createGaleraStore(): Promise<TestStore> {
  const shared = inject('sharedGalera');
  if (shared === undefined || 'unavailable' in shared) throw new Error(sharedGaleraUnavailable());
  const first = galeraStoreCount++ % shared.ports.length;
  const ports = [...shared.ports.slice(first), ...shared.ports.slice(0, first)];
  const name = uniqueName();
  const admin = await galeraAdmin(ports[0]!);
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    kind: 'mysql',
    url: `mysql://root@${ports.map((port) => `127.0.0.1:${port}`).join(',')}/${name}`,
    directUrl: `mysql://root@127.0.0.1:${ports[0]}/${name}`,
    drop: async () => {
      const connection = await galeraAdmin(ports[0]!);
      try {
        await connection.query(`drop database if exists ${name}`);
      } finally {
        await connection.end();
      }
    },
  };
}

/** A connection to a Synced node of the shared cluster, once the global setup's startup got there. */
async function galeraAdmin(port: number) {
  const deadline = Date.now() + GALERA_WAIT_MS;
  let last = '';
  for (;;) {
    const connection = await createConnection({ host: '127.0.0.1', port, user: 'root', connectTimeout: 3000 }).catch((error: Error) => {
      last = error.message;
      return undefined;
    });
    if (connection) {
      // A node that is joining may accept the connection and then drop it or refuse the query.
      const state = await connection
        .query("show global status like 'wsrep_local_state_comment'")
        .then(([rows]) => `wsrep_local_state_comment = ${String((rows as Array<{ Value: string }>)[0]?.Value)}`)
        .catch((error: Error) => error.message);
      if (state === 'wsrep_local_state_comment = Synced') return connection;
      last = state;
      connection.destroy();
    }
    if (Date.now() > deadline) {
      throw new Error(`the shared Galera node on port ${port} is not Synced after ${GALERA_WAIT_MS} ms (${last}); see the global setup's output`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
