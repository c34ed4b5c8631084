// DB_URL → a Kysely instance for the right dialect → reachable → migrated → BookStore.
// Any failure here is a StoreStartupError: the service does not start.
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, Migrator, sql } from 'kysely';
import type { Logger } from 'pino';
import type { StoreConfig, StoreSettings } from '../config.js';
import type { BookStore, StoreDialect } from './book-store.js';
import type { DialectOptions, OpenedDialect } from './dialects/common.js';
import { isStoreUnavailable } from './errors.js';
import { KyselyBookStore, type BookDatabase } from './kysely-book-store.js';
import { migrationsFor } from './migrations/index.js';
import { StoreStartupError } from './startup-error.js';

export { StoreStartupError };

const RETRY_DELAY_MS = 250;

export async function openStore(settings: StoreSettings, logger: Logger): Promise<BookStore> {
  const options: OpenStoreOptions = {
    connectTimeoutMs: settings.connectTimeoutMs,
    queryTimeoutMs: settings.queryTimeoutMs,
    poolMax: settings.poolMax,
    description: settings.description,
    logger,
  };
  const dialect: StoreDialect = settings.target.kind;
  const { kyselyDialect, poolStats, sqlite } = await openDialect(settings.target, options);
  const db = new Kysely<BookDatabase>({ dialect: kyselyDialect });
  try {
    await waitUntilReachable(db, options);
    await migrate(db, dialect, options);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    throw error;
  }
  return new KyselyBookStore(db, dialect, poolStats, sqlite);
}

/** Loads only the driver the store needs (each one costs memory and startup time). */
async function openDialect(config: StoreConfig, options: OpenStoreOptions): Promise<OpenedDialect> {
  switch (config.kind) {
    case 'sqlite':
      return (await import('./dialects/sqlite.js')).openSqliteDialect(config.file, options);
    case 'postgres':
      return (await import('./dialects/postgres.js')).openPostgresDialect(config.url, options);
    case 'mysql':
      return (await import('./dialects/mysql.js')).openMysqlDialect(config.url, options);
  }
}

interface OpenStoreOptions extends DialectOptions {
  /** How long to wait for a store that is not up yet. */
  connectTimeoutMs: number;
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
          `cannot reach the store at ${options.description} (DB_URL)${waited}: ${describeError(error)}`,
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
    throw new StoreStartupError(`cannot migrate the store at ${options.description} (DB_URL): ${describeError(error)}`);
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
