// The store's settings → its database module's driver → reachable → migrated → BookStore.
// Any failure here is a StoreStartupError: the service does not start.
//
// What is layered on the store from outside (tracing's spans around the driver, the speed
// paths' layers) is handed in by the composition root (src/server.ts): the store imports
// neither src/tracing/ nor src/fast/.
import { Migrator, sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import { DEFAULT_IDEMPOTENCY_TTL_MS, bookRepository } from './book-repository.js';
import type { BookStore } from './book-store.js';
import type { BookDatabase } from './books-table.js';
import type { BookStoreDriver, DriverOptions } from './driver.js';
import { newLeaseHolder, withMigrationLease, type LeaseOptions } from './migration-lease.js';
import { describeDriverError } from './errors.js';
import { KeyPurgingBookStore } from './key-purge.js';
import { MIGRATION_NAMES, migrationsFor } from './migrations/index.js';
import { MIGRATIONS_CUT_SHORT, STORE_NOT_UP_YET, retrier, retriesOn } from './retry.js';
import { RetryingBookStore } from './retrying-book-store.js';
import { StoreStartupError } from './startup-error.js';
import { openDriver, type StoreConfig } from './store-url.js';
import type { SqliteWriterFactory } from './sqlite/writer.js';

export { StoreStartupError };
/** DB_MIGRATION_TIMEOUT's default: the bound on one migration statement (a lock held elsewhere, a big table). */
export const DEFAULT_MIGRATION_TIMEOUT_MS = 600_000;

/** Where the books are kept and how long to wait for the store. */
export interface StoreSettings {
  target: StoreConfig;
  /** DB_URL with any password masked: safe to log. */
  description: string;
  connectTimeoutMs: number;
  /** Bound on one query (and on waiting for a pooled connection). */
  queryTimeoutMs: number;
  /** Bound on one migration statement, and on waiting for another instance's migrations (DB_MIGRATION_TIMEOUT). */
  migrationTimeoutMs?: number;
  poolMax: number | undefined;
  /** How long an Idempotency-Key and its answer are kept (IDEMPOTENCY_TTL); 24 hours unless given. */
  idempotencyTtlMs?: number;
}

/** A speed path's part in one store being opened (src/seams.ts); each member optional. */
export interface StoreLayer {
  /** SQLite: what runs its writes (DriverOptions.sqliteWriter). */
  sqliteWriter?: SqliteWriterFactory;
  /** A layer around the repository, inside the retries; `driver` is the one the repository uses. */
  around?: (store: BookStore, driver: BookStoreDriver) => Promise<BookStore>;
}

/** What the composition root layers on the store. */
export interface OpenStoreOptions {
  /** Wraps the driver the book operations use (tracing's spans: the store's queries made for a request become spans of its trace). */
  wrapDriver?: (driver: BookStoreDriver) => BookStoreDriver;
  /** The speed paths' layers, the innermost first; none unless given. */
  layers?: readonly (StoreLayer | undefined)[];
}

export async function openStore(settings: StoreSettings, logger: Logger, { wrapDriver, layers = [] }: OpenStoreOptions = {}): Promise<BookStore> {
  const options: DriverOptions = {
    queryTimeoutMs: settings.queryTimeoutMs,
    poolMax: settings.poolMax,
    description: settings.description,
    logger,
    sqliteWriter: layers.find((layer) => layer?.sqliteWriter)?.sqliteWriter,
  };
  // Loads only the driver the store needs (each one costs memory and startup time).
  const driver = await openDriver(settings.target, options);
  const deadline = Date.now() + settings.connectTimeoutMs;
  const migrationTimeoutMs = settings.migrationTimeoutMs ?? DEFAULT_MIGRATION_TIMEOUT_MS;
  const lease: LeaseOptions = {
    holder: newLeaseHolder(),
    nowMs: driver.nowMs,
    waitAtMostMs: migrationTimeoutMs,
    logger,
    description: settings.description,
    classifyError: driver.classifyError,
  };
  // A node lost or a conflict halfway (a Galera node leaving, a connection cut) while migrating:
  // start over, from waiting for the store, while DB_CONNECT_TIMEOUT lasts.
  const unwrap = (error: unknown) => (error instanceof StoreStartupError ? error.cause : error);
  const migrations = retrier(MIGRATIONS_CUT_SHORT, {
    classify: (error) => driver.classifyError(unwrap(error)),
    // No run starts at the deadline or later: none is decided within one pause of it.
    retryUntil: deadline - MIGRATIONS_CUT_SHORT.pause.ms,
    onRetry: (error) => logger.warn(describeDriverError(unwrap(error)), `migrating the store at ${options.description} failed halfway; retrying`),
  });
  try {
    await migrations.run(async () => {
      await waitUntilReachable(driver, deadline, settings.connectTimeoutMs, options);
      await migrateOnOwnConnections(driver, { ...options, queryTimeoutMs: migrationTimeoutMs, poolMax: 2 }, async (migrating) => {
        if (await schemaIsCurrent(migrating.db)) return;
        // Kysely's migrator locks too, but per server (GET_LOCK on MySQL): not across a Galera cluster.
        await withMigrationLease(migrating.db, lease, () => runMigrations(migrating, options));
      });
    });
  } catch (error) {
    await driver.close().catch(() => undefined);
    throw error instanceof StoreStartupError ? error : migrationFailed(error, options);
  }
  await warnAboutDurability(driver, logger);
  const idempotencyTtlMs = settings.idempotencyTtlMs ?? DEFAULT_IDEMPOTENCY_TTL_MS;
  try {
    // Wrapped only from here: migrations and the startup checks serve no request.
    const store = await bookStoreOn(wrapDriver ? wrapDriver(driver) : driver, idempotencyTtlMs, layers);
    return new KeyPurgingBookStore(store, idempotencyTtlMs, logger);
  } catch (error) {
    await driver.close().catch(() => undefined);
    throw error;
  }
}

/** Logs each server setting that weakens durability; a server that will not say is no reason not to start. */
async function warnAboutDurability(driver: BookStoreDriver, logger: Logger): Promise<void> {
  try {
    for (const warning of (await driver.durabilityWarnings?.()) ?? []) logger.warn(warning);
  } catch (error) {
    logger.debug(describeDriverError(error), 'could not read the store server\'s durability settings');
  }
}

/**
 * The BookStore over an open driver, in layers: the book operations; around them, the speed
 * paths' layers, if any (requests that arrive together sharing queries); around those,
 * conflicts retried, so that each request's share of a batch is retried on its own (and a 503
 * decided).
 */
export async function bookStoreOn(
  driver: BookStoreDriver,
  idempotencyTtlMs = DEFAULT_IDEMPOTENCY_TTL_MS,
  layers: readonly (StoreLayer | undefined)[] = [],
): Promise<BookStore> {
  let store = bookRepository(driver, { idempotencyTtlMs });
  for (const layer of layers) if (layer?.around) store = await layer.around(store, driver);
  return new RetryingBookStore(store, driver.classifyError);
}

/**
 * Runs `migrate` on connections of the migrations' own (their own time limit: DB_QUERY_TIMEOUT
 * does not cut a migration), closed afterwards, and after a failure too: closing them ends
 * their sessions, which rolls back what a failed migration left open and releases every lock
 * it took (PostgreSQL's advisory lock, MySQL's GET_LOCK). SQLite migrates on its one connection.
 */
async function migrateOnOwnConnections(
  driver: BookStoreDriver,
  options: DriverOptions,
  migrate: (migrating: BookStoreDriver) => Promise<void>,
): Promise<void> {
  if (!driver.openForMigrations) return migrate(driver);
  const migrating = driver.openForMigrations(options);
  try {
    await migrate(migrating);
  } finally {
    await migrating.close().catch(() => undefined);
  }
}

/** Retries while the store is unavailable (not up yet), until `deadline`. */
async function waitUntilReachable(
  driver: BookStoreDriver,
  deadline: number,
  connectTimeoutMs: number,
  options: DriverOptions,
): Promise<void> {
  const notUpYet = retrier(STORE_NOT_UP_YET, {
    classify: driver.classifyError,
    retryUntil: deadline - STORE_NOT_UP_YET.pause.ms,
    onRetry: (_error, retry) => {
      if (retry === 1) options.logger.warn(`store at ${options.description} not reachable yet; retrying`);
    },
    giveUp(error) {
      const missing = driver.missingDatabase?.(error);
      if (missing) throw new StoreStartupError(`cannot use the store at ${options.description} (DB_URL): ${missing}`);
      const waited = retriesOn(STORE_NOT_UP_YET, driver.classifyError(error)) ? ` within ${connectTimeoutMs / 1000} s (DB_CONNECT_TIMEOUT)` : '';
      throw new StoreStartupError(`cannot reach the store at ${options.description} (DB_URL)${waited}: ${describeError(error)}`);
    },
  });
  await notUpYet.run(() => sql`select 1`.execute(driver.db));
}

function migrationFailed(error: unknown, options: DriverOptions): StoreStartupError {
  return new StoreStartupError(`cannot migrate the store at ${options.description} (DB_URL): ${describeError(error)}`, {
    cause: error,
  });
}

const MIGRATION_TABLE = 'book_service_migrations';

/**
 * Whether exactly the migrations this version knows are applied, read without writing: then
 * there is nothing to do, and no lease is taken. So an instance or worker starting on a
 * migrated store neither waits for another one's lease nor writes, and a store whose disk is
 * full still starts and serves reads. Anything else (no table yet, a migration missing, one
 * this version does not know) goes the whole way: lease, then Kysely's migrator.
 */
async function schemaIsCurrent(db: Kysely<BookDatabase>): Promise<boolean> {
  try {
    const rows = await db.withTables<{ [MIGRATION_TABLE]: { name: string } }>().selectFrom(MIGRATION_TABLE).select('name').execute();
    const applied = new Set(rows.map((row) => row.name));
    return applied.size === MIGRATION_NAMES.length && MIGRATION_NAMES.every((name) => applied.has(name));
  } catch {
    return false;
  }
}

async function runMigrations(driver: BookStoreDriver, options: DriverOptions) {
  const migrator = new Migrator({
    db: driver.db,
    provider: migrationsFor(driver.booksTable),
    migrationTableName: MIGRATION_TABLE,
    migrationLockTableName: 'book_service_migrations_lock',
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw migrationFailed(error, options);
  for (const result of results ?? []) {
    if (result.status === 'Success') options.logger.info({ migration: result.migrationName }, 'migration applied');
  }
}

function describeError(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) return describeError(error.errors[0]);
  if (error instanceof Error) return error.message || (error as { code?: string }).code || error.name;
  return String(error);
}
