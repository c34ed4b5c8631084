// The SQLite database module: one connection (better-sqlite3), queries run synchronously on
// cached statements, each write its own statement unless a writer is given (writer.ts), the
// list page written as JSON by SQLite.
import { sqliteChanges } from './changes.js';
import { Kysely, SqliteDialect, sql, type CompiledQuery, type QueryResult } from 'kysely';
import { BOOK_COLUMNS } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, type BookDatabase, type RunQuery } from '../books-table.js';
import { byIdQueries } from '../by-id.js';
import type { BooksTableDdl, BookStoreDriver, DatabaseModule, TransactionScope } from '../driver.js';
import { bookQueries } from '../book-query.js';
import { idempotencyKeyQueries } from '../idempotency-keys.js';
import { returningWrites } from '../returning.js';
import { openSqliteConnection } from './connection.js';
import { watchDiskFull } from './disk-full.js';
import { classifySqliteError } from './errors.js';
import { sqliteList } from './list.js';
import type { SqliteTarget } from './sqlite-config.js';

// julianday('now') has millisecond precision; 2440587.5 is the Unix epoch's Julian day.
const NOW_MS = sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`;

const BOOKS_TABLE: BooksTableDdl = {
  // INTEGER PRIMARY KEY is the 64-bit rowid; AUTOINCREMENT, or SQLite may hand out a deleted book's id again.
  idColumn: { type: 'integer', build: (col) => col.primaryKey().autoIncrement() },
  tableOptions: undefined,
  list: sqliteList,
  changes: sqliteChanges,
};

/** `'id', id, 'title', title, …`: each column under its own name, as bookJson() writes it. */
const JSON_OBJECT_ARGUMENTS = BOOK_COLUMNS.map((column) => `'${column}', ${column}`).join(', ');

export const sqlite: DatabaseModule<SqliteTarget> = {
  open({ file }, options): BookStoreDriver {
    const connection = openSqliteConnection(file, options);
    const db = new Kysely<BookDatabase>({ dialect: new SqliteDialect({ database: connection.forKysely }) });
    // One connection: a transaction (BookStoreDriver.transaction) takes it for itself, and
    // every other query, and every write, waits until it has ended.
    let transactionEnded: Promise<void> | undefined;
    const whenFree = <R>(query: () => R): Promise<R> =>
      transactionEnded === undefined ? Promise.resolve(query()) : transactionEnded.then(() => whenFree(query));
    const writer = options.sqliteWriter?.(connection, () => transactionEnded);
    const diskFull = watchDiskFull(file);
    const execute = <R>(query: CompiledQuery<R>): Promise<QueryResult<R>> => Promise.resolve(connection.execute(query));
    const read: RunQuery = (query) => whenFree(() => connection.execute(query));
    // Each write its own statement (SQLite commits it, and syncs it to disk, before answering),
    // unless a writer was given.
    const write: RunQuery = writer ? (query) => diskFull.observe(() => writer.write(query)) : (query) => diskFull.observe(() => read(query));
    const byId = byIdQueries(db);
    const list = bookQueries(db, sqliteList);
    const returning = returningWrites(db);
    // Each row is the book's JSON text itself, written by SQLite in BOOK_COLUMNS order, the
    // id exact (no row objects to build: a large part of the query's cost, measured in
    // docs/benchmarks-changes.md).
    const page = db
      .selectFrom('books')
      .select(sql<string>`json_object(${sql.raw(JSON_OBJECT_ARGUMENTS)})`.as('json'))
      .where('id', '>', 0n)
      .orderBy('id', 'asc')
      .limit(1)
      .compile();
    return {
      db,
      booksTable: BOOKS_TABLE,
      nowMs: NOW_MS,
      ...byId(read, write),
      ...returning(write),
      async selectPage(afterId, limit): Promise<BookPage> {
        const books = await whenFree(() => connection.executePlucked(bind(page, [afterId, limit])).rows);
        return { json: books.join(','), count: books.length, lastId: idOfBookJson(books.at(-1)) };
      },
      selectBooks: (query) => list.selectBooks(read, query),
      transaction: (work) => diskFull.observe(() => transaction(work)),
      idempotencyKeys: idempotencyKeyQueries(db, NOW_MS, 'on-conflict'),
      runWrite: write,
      runRead: read,
      // One connection; queries on it run synchronously, so between two event-loop turns it is
      // idle, and only the writes a writer queued (none without one) are waiting.
      poolStats: () => ({ total: 1, idle: 1, waiting: writer?.waiting ?? 0, max: 1 }),
      nodeUse: () => undefined,
      databaseSystem: () => 'sqlite',
      classifyError: classifySqliteError,
      unwritable: async () => diskFull.unwritable(),
      close: () => db.destroy(),
    };

    /** BookStoreDriver.transaction: one at a time on the one connection. */
    async function transaction<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
      while (transactionEnded) await transactionEnded;
      let end!: () => void;
      transactionEnded = new Promise<void>((resolve) => (end = resolve));
      try {
        // IMMEDIATE: the write lock at once (another process's writer is waited for, up to the busy timeout).
        connection.database.exec('BEGIN IMMEDIATE');
        try {
          const result = await work({ run: execute, ...byId(execute, execute), ...returning(execute) });
          connection.database.exec('COMMIT');
          return result;
        } catch (error) {
          if (connection.database.inTransaction) connection.database.exec('ROLLBACK');
          throw error;
        }
      } finally {
        transactionEnded = undefined;
        end();
      }
    }
  },
};

/** The id at the start of a book's JSON text as SQLite writes it: `{"id":123,…`. */
function idOfBookJson(json: string | undefined): bigint | undefined {
  const digits = json === undefined ? undefined : /^\{"id":(\d+)/.exec(json)?.[1];
  return digits === undefined ? undefined : BigInt(digits);
}
