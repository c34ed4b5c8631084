// The SQLite database module: one connection (better-sqlite3), queries run synchronously on
// cached statements, writes batched by group commit, the list page written as JSON by SQLite.
import { Kysely, SqliteDialect, sql, type CompiledQuery } from 'kysely';
import { BOOK_COLUMNS } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, type BookDatabase } from '../books-table.js';
import { byIdQueries } from '../by-id.js';
import type { BooksTableDdl, BookStoreDriver, DatabaseModule } from '../driver.js';
import { returningWrites } from '../returning.js';
import { openSqliteConnection } from './connection.js';
import { classifySqliteError } from './errors.js';
import { GroupCommit } from './group-commit.js';
import type { SqliteTarget } from './sqlite-config.js';

const BOOKS_TABLE: BooksTableDdl = {
  // INTEGER PRIMARY KEY is the 64-bit rowid; AUTOINCREMENT, or SQLite may hand out a deleted book's id again.
  idColumn: { type: 'integer', build: (col) => col.primaryKey().autoIncrement() },
  tableOptions: undefined,
};

/** `'id', id, 'title', title, …`: each column under its own name, as bookJson() writes it. */
const JSON_OBJECT_ARGUMENTS = BOOK_COLUMNS.map((column) => `'${column}', ${column}`).join(', ');

export const sqlite: DatabaseModule<SqliteTarget> = {
  open({ file }, options): BookStoreDriver {
    const connection = openSqliteConnection(file, options);
    const db = new Kysely<BookDatabase>({ dialect: new SqliteDialect({ database: connection.forKysely }) });
    // Concurrent writes share one transaction and one fsync.
    const groupCommit = new GroupCommit(connection.database);
    const read = <R>(query: CompiledQuery<R>) => Promise.resolve(connection.execute(query));
    const write = <R>(query: CompiledQuery<R>) => groupCommit.run(() => connection.execute(query));
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
      // julianday('now') has millisecond precision; 2440587.5 is the Unix epoch's Julian day.
      nowMs: sql<number>`cast((julianday('now') - 2440587.5) * 86400000 as integer)`,
      ...byIdQueries(db, read, write),
      ...returningWrites(db, write),
      async selectPage(afterId, limit): Promise<BookPage> {
        const books = connection.executePlucked(bind(page, [afterId, limit])).rows;
        return { json: books.join(','), count: books.length, lastId: idOfBookJson(books.at(-1)) };
      },
      // One connection; queries on it run synchronously, so between two event-loop turns it is
      // idle and only writes queued for the next group commit are waiting.
      poolStats: () => ({ total: 1, idle: 1, waiting: groupCommit.waiting, max: 1 }),
      nodeUse: () => undefined,
      classifyError: classifySqliteError,
      close: () => db.destroy(),
    };
  },
};

/** The id at the start of a book's JSON text as SQLite writes it: `{"id":123,…`. */
function idOfBookJson(json: string | undefined): bigint | undefined {
  const digits = json === undefined ? undefined : /^\{"id":(\d+)/.exec(json)?.[1];
  return digits === undefined ? undefined : BigInt(digits);
}
