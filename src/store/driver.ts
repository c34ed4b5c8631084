// The one interface every database module implements. All that differs between SQLite,
// PostgreSQL and MySQL lives behind it, in src/store/<kind>/; the repository
// (book-repository.ts), its batching layer and the migrations use only this. Each of its
// book operations is one method that answers with books, pages and flags, never rows.
import type { ColumnBuilderCallback, ColumnDataType, Expression, Kysely, RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { BookFields, StoredBook } from '../books/book.js';
import type { BookPage, NodeUse, PoolStats } from './book-store.js';
import type { BookDatabase } from './books-table.js';
import type { StoreErrorKind } from './errors.js';

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
}

export const DEFAULT_POOL_MAX = 10;

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

/** What the books table's DDL takes from the database; its other columns follow src/books/book.ts. */
export interface BooksTableDdl {
  /** A 64-bit integer primary key, generated, never reused after a delete. */
  idColumn: { type: ColumnDataType; build: ColumnBuilderCallback };
  /** Appended to CREATE TABLE (engine, character set), if anything. */
  tableOptions: Expression<unknown> | undefined;
}

/** One open database. Every query the store sends goes through it. */
export interface BookStoreDriver {
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

  // The book operations. The writes resolve once what they wrote is durable.

  /** The book with this id; undefined when there is none. */
  selectBook(id: bigint): Promise<StoredBook | undefined>;
  /**
   * The books with these ids (any order, the missing ones left out), in one query. Given by
   * the databases across a network: the books that requests arriving together ask for are
   * read in one round trip (see batched-book-store.ts). Left out by SQLite, whose reads are
   * synchronous calls.
   */
  selectByIds?(ids: readonly bigint[]): Promise<StoredBook[]>;
  /** Up to `limit` books with an id above `afterId`, by id, as one page of JSON. */
  selectPage(afterId: bigint, limit: number): Promise<BookPage>;

  /** Inserts a book (title, author, year): the book as written, with the id it got. */
  insertBook(fields: BookFields): Promise<StoredBook>;
  /**
   * Inserts several books in one statement (one transaction: all or none), each book as
   * written coming back, in any order. Given where the database can say which id each row
   * got (PostgreSQL's RETURNING): the books of requests that arrive together are written in
   * one round trip and one commit. Rejects with a StatementRefusedError (errors.ts) when the
   * database refused the statement, so that nothing was written.
   */
  insertBooks?(books: readonly BookFields[]): Promise<StoredBook[]>;
  /** Applies `changes` (at least one field): the book as written, undefined when it does not exist. */
  updateBook(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined>;
  /** False when no such book exists. */
  deleteBook(id: bigint): Promise<boolean>;

  /** Connection pool usage (of the node in use), for metrics. */
  poolStats(): PoolStats | undefined;
  /** The hosts DB_URL lists and the one in use; undefined for a file (SQLite). */
  nodeUse(): NodeUse | undefined;
  /** What a driver error means; see errors.ts. */
  classifyError(error: unknown): StoreErrorKind | undefined;
  close(): Promise<void>;
}
