// One migrator at a time across every instance, whatever node each one talks to. Kysely's
// migrator locks with GET_LOCK on MySQL, which holds on one server only: on a Galera cluster
// instances migrating through different nodes at once would all run the DDL. The lease is a
// row instead: a write every node agrees on (a second insert of the same key fails with a
// duplicate key, or with a certification conflict when both happen at once).
//
// Times are the database's: the lease's end is written and compared with the database's own
// clock (never a host's, which may be skewed), and the holder renews it while its migrations
// run, so a migration longer than LEASE_MS keeps it. Only a holder that stopped renewing (it
// died) loses it, LEASE_MS after its last renewal.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type SchemaModule } from 'kysely';
import type { Logger } from 'pino';
import type { BookDatabase } from './books-table.js';
import { describeDriverError, type StoreErrorKind } from './errors.js';
import { LEASE_HELD, LEASE_TABLE_RACE, retrier, retriesOn } from './retry.js';
import { StoreStartupError } from './startup-error.js';

const LEASE_TABLE = 'book_service_migration_lease';
const LEASE_ROW = 1;
/** A holder that died keeps others waiting this long after its last renewal (renewed every quarter of it). */
const LEASE_MS = 60_000;

// A type alias (not an interface): withTables wants an index-signature-compatible record.
type LeaseDatabase = {
  [LEASE_TABLE]: { id: number; holder: string; expires_at: number };
};

export interface LeaseOptions {
  /** Who asks: one per store opened (newLeaseHolder), the same when it asks again after a failure. */
  holder: string;
  /** The database's clock in ms since the epoch (the driver's nowMs). */
  nowMs: RawBuilder<number>;
  /** How long to wait for another holder at most (it renews while its migrations run). */
  waitAtMostMs: number;
  /** How long the lease lasts after each renewal (LEASE_MS; tests shorten it). */
  leaseMs?: number;
  logger: Logger;
  description: string;
  classifyError: (error: unknown) => StoreErrorKind | undefined;
}

export function newLeaseHolder(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** Runs `work` while holding the migration lease; waits for another holder to finish first. */
export async function withMigrationLease<T>(booksDb: Kysely<BookDatabase>, options: LeaseOptions, work: () => Promise<T>): Promise<T> {
  const db = booksDb.withTables<LeaseDatabase>();
  const { holder } = options;
  const leaseMs = options.leaseMs ?? LEASE_MS;
  const expiresAt = sql<number>`${options.nowMs} + ${sql.lit(leaseMs)}`;
  await createLeaseTable(db.schema, options);
  const deadline = Date.now() + options.waitAtMostMs;
  const leaseHeld = retrier(LEASE_HELD, {
    classify: options.classifyError,
    retryUntil: deadline,
    onRetry: (_error, retry) => {
      if (retry === 1) options.logger.info('another instance is migrating the store; waiting for it');
    },
    giveUp(error) {
      if (!retriesOn(LEASE_HELD, options.classifyError(error))) throw error;
      throw new StoreStartupError(
        `cannot migrate the store at ${options.description} (DB_URL): another instance held the migration lease ` +
          `for more than ${Math.round(options.waitAtMostMs / 1000)} s (delete the row of ${LEASE_TABLE} if no migration runs)`,
      );
    },
  });
  await leaseHeld.run(async () => {
    // A lease whose holder died (it stopped renewing) has ended by the database's clock; our
    // own, left by an attempt whose connection broke, ends now.
    await db
      .deleteFrom(LEASE_TABLE)
      .where('id', '=', LEASE_ROW)
      .where((row) => row.or([row('expires_at', '<', options.nowMs), row('holder', '=', holder)]))
      .execute();
    await db.insertInto(LEASE_TABLE).values({ id: LEASE_ROW, holder, expires_at: expiresAt }).execute();
  });
  const renewal = keepRenewing(db, options, expiresAt, leaseMs / 4);
  try {
    return await work();
  } finally {
    await renewal.stop();
    await db
      .deleteFrom(LEASE_TABLE)
      .where('id', '=', LEASE_ROW)
      .where('holder', '=', holder)
      .execute()
      .catch((error: unknown) => options.logger.warn(describeDriverError(error), 'could not release the migration lease; it ends by itself'));
  }
}

/**
 * Pushes the lease's end forward every `everyMs` until stopped; stop() waits for a renewal in
 * flight, so it never runs after the lease is released (and reports it "taken over").
 */
function keepRenewing(
  db: Kysely<LeaseDatabase>,
  options: LeaseOptions,
  expiresAt: RawBuilder<number>,
  everyMs: number,
): { stop(): Promise<void> } {
  let renewing: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(() => {
    renewing = renewing.then(async () => {
      if (stopped) return;
      try {
        const result = await db
          .updateTable(LEASE_TABLE)
          .set({ expires_at: expiresAt })
          .where('id', '=', LEASE_ROW)
          .where('holder', '=', options.holder)
          .executeTakeFirst();
        if (result.numUpdatedRows === 0n) options.logger.error('the migration lease was taken over by another instance while migrating');
      } catch (error) {
        options.logger.warn(describeDriverError(error), 'could not renew the migration lease; trying again');
      }
    });
  }, everyMs);
  timer.unref();
  return {
    stop() {
      stopped = true;
      clearInterval(timer);
      return renewing;
    },
  };
}

/**
 * CREATE TABLE IF NOT EXISTS, which instances starting together may all send: PostgreSQL can
 * then fail one with a duplicate key in its catalog or "type … already exists" (its row type),
 * Galera with a conflict; all are retried.
 */
async function createLeaseTable(schema: SchemaModule, options: LeaseOptions): Promise<void> {
  await retrier(LEASE_TABLE_RACE, { classify: options.classifyError }).run(() =>
    schema
      .createTable(LEASE_TABLE)
      .ifNotExists()
      .addColumn('id', 'integer', (col) => col.primaryKey())
      .addColumn('holder', 'varchar(100)', (col) => col.notNull())
      .addColumn('expires_at', 'bigint', (col) => col.notNull())
      .execute(),
  );
}
