// The one interface every database module implements. All that differs between SQLite,
// PostgreSQL and MySQL lives behind it, in src/store/<kind>/; the repository
// (book-repository.ts), the migrations and whatever is layered around them (tracing's spans,
// the speed paths of src/fast/) use only this. Each of its book operations is one method that
// answers with books, pages and flags, never rows.
import type { ColumnBuilderCallback, ColumnDataType, Expression, Kysely, RawBuilder } from 'kysely';
import type mysql from 'mysql2';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { BookFields, VersionedBook } from '../books/book.js';
import type { BookQuery } from '../books/book-query.js';
import type { BookListSql, FoundBooks } from './book-query.js';
import type { BookPage, NodeUse, PoolStats } from './book-store.js';
import type { BookDatabase, RunQuery } from './books-table.js';
import type { StoreErrorKind } from './errors.js';
import type { IdempotencyKeyQueries } from './idempotency-keys.js';
import type { SqliteWriterFactory } from './sqlite/writer.js';

export interface DriverOptions {
  /**
   * Bound on one statement, enforced by the database itself where it can (the statement is
   * cancelled and rolled back), and on waiting for a pooled connection: an outage or a lock
   * held elsewhere answers 503, not a hang.
   */
  queryTimeoutMs: number;
  poolMax: number | undefined;
  logger: Logger;
  /** Shown in messages instead of the URL, which may hold a password. */
  description: string;
  /** SQLite only: what runs its writes; unless given, each write is its own statement (sqlite/writer.ts). */
  sqliteWriter?: SqliteWriterFactory;
}

export const DEFAULT_POOL_MAX = 10;

/** The databases the service speaks to, by OpenTelemetry's names for them. */
export type DatabaseSystem = 'sqlite' | 'postgresql' | 'mysql' | 'mariadb';

/**
 * How much longer than the statement limit a network driver waits for the server's own answer.
 * The server stops a statement at the limit and says so (rolled back: known); only a server
 * that says nothing within this grace (hung, partitioned) is given up on by the client, and
 * that connection is closed, never reused.
 */
export function clientGraceMs(queryTimeoutMs: number): number {
  return Math.min(500, Math.max(100, queryTimeoutMs / 4));
}

/** What src/store/<kind>/index.ts exports; store-url.ts loads it only when a store of its kind opens. */
export interface DatabaseModule<Target> {
  /** Opens the connection or pool (nothing is sent yet: openStore waits until it answers). */
  open(target: Target, options: DriverOptions): BookStoreDriver;
}

/**
 * What src/store/<kind>/<kind>-config.ts exports: how DB_URL names a store of that kind and
 * what it parses to. store-url.ts reads it at startup, so it loads no driver.
 */
export interface DatabaseUrls<Target extends { kind: string }> {
  kind: Target['kind'];
  /** Each URL scheme of this database, written as the message for an unsupported scheme shows it (`sqlite:PATH`). */
  schemes: Readonly<Record<string, string>>;
  /** DB_URL (whose scheme is one of `schemes`) → what to open; throws `Invalid` naming DB_URL for a URL it cannot use. */
  parse(dbUrl: string, context: { scheme: string; cwd: string; Invalid: new (message: string) => Error }): Target;
}

/** What the tables' DDL takes from the database; the books' other columns follow src/books/book.ts. */
export interface BooksTableDdl {
  /** A 64-bit integer primary key, generated, never reused after a delete. */
  idColumn: { type: ColumnDataType; build: ColumnBuilderCallback };
  /** Appended to CREATE TABLE (engine, character set), if anything. */
  tableOptions: Expression<unknown> | undefined;
  /**
   * The column type for a stored answer (idempotency_keys.body) where `text` is too small for
   * the largest, a batch's 4 MiB: MySQL's TEXT holds 64 KiB. Left out where `text` has no limit.
   */
  largeTextType?: Expression<unknown>;
  /** Whether an index exists, for a database without CREATE INDEX IF NOT EXISTS (MySQL). */
  indexExists?(db: Kysely<unknown>, table: string, index: string): Promise<boolean>;
  /** How the list sorts and searches, and the indexes for it (src/<kind>/list.ts). */
  list: BookListSql;
  /** How every write of a book records its change in the same transaction (src/<kind>/changes.ts). */
  changes: ChangeTriggers;
}

/**
 * The triggers that record a change (book_feed, or book_changes for the sequencer) for every insert, update and delete of a book,
 * in the write's own transaction (src/store/change-log.ts says how the rows are ordered).
 */
export interface ChangeTriggers {
  /**
   * Who gives a change its position in the feed: the trigger itself (SQLite: one writer at a
   * time, so positions taken in the write are in commit order), or the sequencer, after the
   * write commits (PostgreSQL, MySQL: writers run in parallel and commit in any order).
   */
  positionedBy: 'trigger' | 'sequencer';
  create(db: Kysely<unknown>): Promise<void>;
  drop(db: Kysely<unknown>): Promise<void>;
}

/**
 * The writes and the read of one book, on the pool (each its own statement) or inside one
 * transaction (BookStoreDriver.transaction). The writes resolve once what they wrote is durable.
 */
export interface BookOperations {
  /** The book with this id; undefined when there is none. */
  selectBook(id: bigint): Promise<VersionedBook | undefined>;
  /** Inserts a book (title, author, year): the book as written, with the id it got and version 1. */
  insertBook(fields: BookFields): Promise<VersionedBook>;
  /**
   * Optional: inserts several books with one statement, the books as written in the order given
   * (a batch's consecutive creates: one round trip, not one each). Left out where a statement's
   * new ids cannot be read back in order (MySQL): each is then inserted on its own.
   */
  insertBooks?(fields: readonly BookFields[]): Promise<VersionedBook[]>;
  /**
   * Applies `changes` (at least one field) and raises the version by one: the book as written.
   * With `ifVersion`, only while the book is at one of those versions, checked in the same
   * statement. Undefined when no row matched (no such book, or at another version).
   */
  updateBook(id: bigint, changes: Partial<BookFields>, ifVersion?: readonly number[]): Promise<VersionedBook | undefined>;
  /** False when no row matched (no such book, or, with `ifVersion`, at another version). */
  deleteBook(id: bigint, ifVersion?: readonly number[]): Promise<boolean>;
}

/** One open database. Every query the store sends goes through it. */
export interface BookStoreDriver extends BookOperations {
  /** Kysely over the connection or pool: migrations, health checks, queries that are not hot. */
  readonly db: Kysely<BookDatabase>;
  readonly booksTable: BooksTableDdl;
  /** The database's own clock, in milliseconds since the epoch (the migration lease compares times with it, never a host's). */
  readonly nowMs: RawBuilder<number>;
  /**
   * The same database on connections of its own, with `options` (their own time limit, a pool
   * of two): migrations run on it so that DB_QUERY_TIMEOUT does not cut them, and closing it
   * after a failure releases every lock they took. Left out by SQLite (one connection; an
   * in-memory database exists only on it): migrations then use this driver.
   */
  openForMigrations?(options: DriverOptions): BookStoreDriver;

  // The book operations (BookOperations, above), and these:

  /** Up to `limit` books with an id above `afterId`, by id, as one page of JSON. */
  selectPage(afterId: bigint, limit: number): Promise<BookPage>;
  /** One page of the list in any order, searched or not, and how many match if asked (book-query.ts). */
  selectBooks(query: BookQuery): Promise<FoundBooks>;

  /**
   * Runs `work` in one transaction on one connection: everything it writes through `tx`
   * commits together once it resolves, or nothing does. `work` may await only `tx`'s queries
   * (SQLite runs it between two turns of the event loop).
   */
  transaction<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T>;
  /** The Idempotency-Key queries (idempotency-keys.ts); run them with `runWrite` or a transaction's `run`. */
  readonly idempotencyKeys: IdempotencyKeyQueries;
  /** Runs a write on its own, outside any transaction, resolved once it is durable. */
  readonly runWrite: RunQuery;
  /** Runs a read on its own, outside any transaction. */
  readonly runRead: RunQuery;

  /** Connection pool usage (of the node in use), for metrics. */
  poolStats(): PoolStats | undefined;
  /** The hosts DB_URL lists and the one in use; undefined for a file (SQLite). */
  nodeUse(): NodeUse | undefined;
  /** Which database the node in use is, as OpenTelemetry names it (`db.system.name`): for traces. */
  databaseSystem(): DatabaseSystem;
  /**
   * What the node in use said its version is (`select version()`, asked on its first
   * connection), where features differ between versions of one database (MySQL, MariaDB);
   * undefined until then, and left out where the driver does not ask (SQLite, PostgreSQL).
   */
  serverVersion?(): string | undefined;
  /** What a driver error means; see errors.ts. */
  classifyError(error: unknown): StoreErrorKind | undefined;
  /**
   * When `error` says the server was reached but DB_URL's database does not exist: a sentence
   * naming it and the command that creates it, for the startup failure; undefined otherwise.
   */
  missingDatabase?(error: unknown): string | undefined;
  /**
   * The server's settings that weaken "an acknowledged write survives a crash" (fsync off,
   * innodb_flush_log_at_trx_commit other than 1), one sentence each, for startup warnings;
   * left out where the service sets them itself (SQLite: synchronous = FULL).
   */
  durabilityWarnings?(): Promise<string[]>;
  /**
   * Why a write cannot commit now (SQLite: its disk is full), for readiness; undefined when it
   * can. Left out where the database server watches its own disk (PostgreSQL, MySQL).
   */
  unwritable?(): Promise<string | undefined>;
  /**
   * PostgreSQL: a connection of the node in use, from the pool, for a statement Kysely cannot
   * send (the speed path bulk-lists' COPY … TO STDOUT). The caller releases it, with `true`
   * when it failed mid-statement so that it is closed, not reused. Left out by the others.
   */
  postgresClient?(): Promise<pg.PoolClient>;
  /**
   * MySQL: a connection of the node in use, from the pool, as mysql2 makes it, for a result
   * read without mysql2's row objects (the speed path bulk-lists). Left out by the others.
   */
  mysqlConnection?(): Promise<RawMysqlConnection>;
  close(): Promise<void>;
}

/** A pooled MySQL connection lent out as it is (BookStoreDriver.mysqlConnection). */
export interface RawMysqlConnection {
  connection: mysql.PoolConnection;
  /** How long to wait for the server's answer to a statement (its own limit, and a grace). */
  timeoutMs: number;
  /** Back to the pool; with `true`, closed instead (left mid-statement). */
  release(destroy?: boolean): void;
}

/** Inside BookStoreDriver.transaction: the book operations, and any other query, on the transaction. */
export interface TransactionScope extends BookOperations {
  readonly run: RunQuery;
}
