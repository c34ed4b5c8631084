// DB_URL → a Kysely instance for the right dialect → reachable → migrated → BookStore.
// Any failure here is a StoreStartupError: the service does not start.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import SqliteDatabase from 'better-sqlite3';
import {
  Kysely,
  Migrator,
  MysqlDialect,
  PostgresDialect,
  SqliteDialect,
  sql,
  type Dialect,
  type PostgresPool,
  type PostgresPoolClient,
} from 'kysely';
import { createPool as createMysqlPool } from 'mysql2';
import pg from 'pg';
import type { Logger } from 'pino';
import type { StoreConfig } from '../config.js';
import type { BookStore, PoolStats, StoreDialect } from './book-store.js';
import { isStoreUnavailable } from './errors.js';
import { KyselyBookStore, type BookDatabase } from './kysely-book-store.js';
import { migrationsFor } from './migrations/index.js';

export interface OpenStoreOptions {
  /** How long to wait for a store that is not up yet. */
  connectTimeoutMs: number;
  /** Bound on one query (and on waiting for a pooled connection) so an outage answers 503, not a hang. */
  queryTimeoutMs: number;
  poolMax: number | undefined;
  logger: Logger;
  /** Shown in messages instead of the URL, which may hold a password. */
  description: string;
}

export class StoreStartupError extends Error {
  override name = 'StoreStartupError';
}

const DEFAULT_POOL_MAX = 10;
const SQLITE_BUSY_TIMEOUT_MS = 5000;
const RETRY_DELAY_MS = 250;
const MAX_PREPARED_STATEMENTS = 64;

export async function openStore(config: StoreConfig, options: OpenStoreOptions): Promise<BookStore> {
  const dialect: StoreDialect = config.kind;
  const { kyselyDialect, poolStats } = createDialect(config, options);
  const db = new Kysely<BookDatabase>({ dialect: kyselyDialect });
  try {
    await waitUntilReachable(db, options);
    await migrate(db, dialect, options);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  return new KyselyBookStore(db, dialect, poolStats);
}

function createDialect(
  config: StoreConfig,
  options: OpenStoreOptions,
): { kyselyDialect: Dialect; poolStats: () => PoolStats | undefined } {
  const max = options.poolMax ?? DEFAULT_POOL_MAX;
  switch (config.kind) {
    case 'sqlite':
      return {
        kyselyDialect: new SqliteDialect({ database: openSqlite(config.file, options) }),
        poolStats: () => undefined,
      };
    case 'postgres': {
      const pool = createPostgresPool(config.url, options);
      return {
        kyselyDialect: new PostgresDialect({ pool: withPreparedStatements(pool) }),
        poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max }),
      };
    }
    case 'mysql': {
      const pool = createMysqlPoolFor(config.url, options);
      // mysql2 exposes no counters; its queues are stable internals since 1.x.
      const internals = pool as unknown as Record<'_allConnections' | '_freeConnections' | '_connectionQueue', { length: number }>;
      return {
        kyselyDialect: new MysqlDialect({ pool }),
        poolStats: () => ({
          total: internals._allConnections.length,
          idle: internals._freeConnections.length,
          waiting: internals._connectionQueue.length,
          max,
        }),
      };
    }
  }
}

function openSqlite(file: string, options: OpenStoreOptions) {
  let database: SqliteDatabase.Database;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    database = new SqliteDatabase(file);
    // WAL for concurrent readers; FULL so an acknowledged write survives power loss, not only a crash.
    if (file !== ':memory:') database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Every integer as bigint: ids above 2^53 would otherwise be rounded.
    database.defaultSafeIntegers(true);
  } catch (error) {
    throw new StoreStartupError(`cannot open SQLite store ${options.description}: ${(error as Error).message}`);
  }
  return withStatementCache(database);
}

/**
 * Kysely prepares every statement anew; better-sqlite3 statements are reusable, so keep
 * them by SQL text. Kysely's SQLite driver runs one query at a time, so a cached statement
 * is never in use twice at once. The set of SQL texts is small and fixed by the code.
 */
function withStatementCache(database: SqliteDatabase.Database) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = database.prepare(text);
        if (statements.size < 256) statements.set(text, statement);
      }
      return statement;
    },
  };
}

function createPostgresPool(url: string, options: OpenStoreOptions) {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: options.queryTimeoutMs,
    query_timeout: options.queryTimeoutMs,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: {
      // int8 (oid 20) as bigint: the driver's default string would lose nothing, but bigint is what the store promises.
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection lost while idle (pool 'error') or while in use (client 'error': pg-pool
  // removes its own listener on checkout) must not crash the process. The failing query
  // rejects on its own; pg-pool discards the broken client when it is released.
  pool.on('error', (error) => options.logger.warn({ err: error }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.logger.warn({ err: error }, 'PostgreSQL connection failed'));
  });
  return pool;
}

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each time. Name the
 * parameterized ones (a small, fixed set of SQL texts) so each connection prepares them once.
 * Behind a transaction-mode pooler (PgBouncer < 1.21) named statements do not work.
 */
function withPreparedStatements(pool: pg.Pool): PostgresPool {
  const names = new Map<string, string>();
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const nameFor = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) {
      name = `book_service_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = {
          query(textOrCursor: unknown, parameters?: readonly unknown[]) {
            if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
            const name = parameters && parameters.length > 0 ? nameFor(textOrCursor) : undefined;
            return name === undefined
              ? client.query(textOrCursor, parameters as unknown[])
              : client.query({ name, text: textOrCursor, values: parameters as unknown[] });
          },
          release: () => client.release(),
        } as unknown as PostgresPoolClient;
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}

function createMysqlPoolFor(url: string, options: OpenStoreOptions) {
  const pool = createMysqlPool({
    uri: url,
    connectionLimit: options.poolMax ?? DEFAULT_POOL_MAX,
    connectTimeout: options.queryTimeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  // Same for MySQL: every connection gets a lasting listener, so a dropped one cannot crash us.
  pool.on('connection', (connection) => {
    connection.on('error', (error: unknown) => options.logger.warn({ err: error }, 'MySQL connection failed'));
  });
  return pool;
}

async function waitUntilReachable(db: Kysely<BookDatabase>, options: OpenStoreOptions): Promise<void> {
  const deadline = Date.now() + options.connectTimeoutMs;
  let attempt = 0;
  for (;;) {
    attempt += 1;
    try {
      await sql`select 1`.execute(db);
      return;
    } catch (error) {
      const retryable = isStoreUnavailable(error);
      if (!retryable || Date.now() + RETRY_DELAY_MS >= deadline) {
        const waited = retryable ? ` within ${options.connectTimeoutMs / 1000} s (DB_CONNECT_TIMEOUT)` : '';
        throw new StoreStartupError(
          `cannot reach the store at ${options.description}${waited}: ${describeError(error)}`,
        );
      }
      if (attempt === 1) options.logger.warn(`store at ${options.description} not reachable yet; retrying`);
      await sleep(RETRY_DELAY_MS);
    }
  }
}

async function migrate(db: Kysely<BookDatabase>, dialect: StoreDialect, options: OpenStoreOptions) {
  // Kysely's migrator serialises concurrent instances with an advisory lock (PostgreSQL, MySQL).
  const migrator = new Migrator({
    db,
    provider: migrationsFor(dialect),
    migrationTableName: 'book_service_migrations',
    migrationLockTableName: 'book_service_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    throw new StoreStartupError(`cannot migrate the store at ${options.description}: ${describeError(error)}`);
  }
  for (const result of results ?? []) {
    if (result.status === 'Success') options.logger.info({ migration: result.migrationName }, 'migration applied');
  }
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}
