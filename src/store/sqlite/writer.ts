// How SQLite's writes reach its one connection. Unless the store is opened with a writer
// (DriverOptions.sqliteWriter), each write is its own statement, so its own implicit
// transaction, run at once unless an explicit transaction holds the connection (index.ts). A
// writer stands in for that: the group-commit speed path gives one (src/seams.ts).
// Types only: this file loads nothing.
import type { Database } from 'better-sqlite3';
import type { CompiledQuery, QueryResult } from 'kysely';

/** The part of a better-sqlite3 Database that a writer's transactions need. */
export type TransactionalDatabase = Pick<Database, 'transaction' | 'inTransaction'>;

/** What a writer gets of the connection: its synchronous executor (statements cached), and the database for transactions. */
export interface SqliteWriterConnection {
  execute<R>(query: CompiledQuery<R>): QueryResult<R>;
  readonly database: TransactionalDatabase;
}

export interface SqliteWriter {
  /** Runs one write; resolves with its result once it is durable. */
  write<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
  /** Writes waiting to run (the metrics show them as the one connection's queue). */
  readonly waiting: number;
}

/**
 * Makes the writer of a SQLite store being opened. `busy`: while it answers a promise, an
 * explicit transaction (BookStoreDriver.transaction) holds the connection, and writes wait for it.
 */
export type SqliteWriterFactory = (connection: SqliteWriterConnection, busy: () => Promise<unknown> | undefined) => SqliteWriter;
