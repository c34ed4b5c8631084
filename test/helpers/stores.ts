// A fresh, empty store per test suite, for every dialect that is reachable here.
// Unreachable PostgreSQL/MySQL: the suite is skipped with a visible message, except under
// CI=true, where an unreachable store is a failure.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { openSqlite } from './sqlite.js';
import { describeWhenAvailable } from './ci.js';

export type StoreKind = 'sqlite' | 'postgres' | 'mysql';

export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';

/** `DIALECTS=sqlite,postgres` narrows the run, like Kysely's own test harness. */
export const STORE_KINDS: StoreKind[] = (process.env.DIALECTS ?? 'sqlite,postgres,mysql')
  .split(',')
  .map((kind) => kind.trim())
  .filter((kind): kind is StoreKind => kind === 'sqlite' || kind === 'postgres' || kind === 'mysql');


export interface TestStore {
  kind: StoreKind;
  /** DB_URL for the service. */
  url: string;
  /** Drops the database (or deletes the file). */
  drop(): Promise<void>;
}

function uniqueName(): string {
  return `books_test_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export function withDatabase(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

export async function createTestStore(kind: StoreKind): Promise<TestStore> {
  switch (kind) {
    case 'sqlite': {
      const dir = mkdtempSync(join(tmpdir(), 'books-test-'));
      return {
        kind,
        url: `sqlite:${join(dir, 'books.db')}`,
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    }
    case 'postgres': {
      const name = uniqueName();
      await withPostgresAdmin((client) => client.query(`create database ${name}`));
      return {
        kind,
        url: withDatabase(POSTGRES_ADMIN_URL, name),
        drop: async () => {
          await withPostgresAdmin((client) => client.query(`drop database if exists ${name} with (force)`));
        },
      };
    }
    case 'mysql': {
      const name = uniqueName();
      await withMysqlAdmin((connection) => connection.query(`create database ${name}`));
      return {
        kind,
        url: withDatabase(MYSQL_ADMIN_URL, name),
        drop: async () => {
          await withMysqlAdmin((connection) => connection.query(`drop database if exists ${name}`));
        },
      };
    }
  }
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
      const connection = await createConnection({ uri: testStore.url });
      try {
        await connection.query(statement);
      } finally {
        await connection.end();
      }
    }
  }
}

/** Undefined when the store answers, else why not. */
async function unreachableReason(kind: StoreKind): Promise<string | undefined> {
  try {
    if (kind === 'postgres') await withPostgresAdmin((client) => client.query('select 1'));
    if (kind === 'mysql') await withMysqlAdmin((connection) => connection.query('select 1'));
    return undefined;
  } catch (error) {
    const where = kind === 'postgres' ? 'TEST_POSTGRES_URL' : 'TEST_MYSQL_URL';
    return `${kind} unreachable (${where}): ${(error as Error).message || (error as { code?: string }).code}`;
  }
}

const reachability = new Map<StoreKind, string | undefined>(
  await Promise.all(STORE_KINDS.map(async (kind) => [kind, await unreachableReason(kind)] as const)),
);

/**
 * Runs `suite` once per store kind (of `only`, if given), inside `describe('<kind>')`. An unreachable store
 * skips its copy with a message, or fails it under CI.
 */
export function forEachStore(suite: (kind: StoreKind) => void, only: readonly StoreKind[] = STORE_KINDS) {
  for (const kind of STORE_KINDS) {
    if (only.includes(kind)) describeWhenAvailable(kind, reachability.get(kind), () => suite(kind));
  }
}

/** The stores that are servers, not files: PostgreSQL and MySQL. */
export const SERVER_STORES: readonly StoreKind[] = ['postgres', 'mysql'];
