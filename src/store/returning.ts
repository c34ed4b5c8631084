// Writes with RETURNING (SQLite, PostgreSQL): the row as written comes back with the write,
// in the same statement, so the answer is exactly our own write.
import type { CompiledQuery, Kysely, QueryResult } from 'kysely';
import { BOOK_COLUMNS, type BookFields } from '../books/book.js';
import { bind, toStoredBook, type BookDatabase, type BookRow } from './books-table.js';
import type { BookStoreDriver } from './driver.js';

type Write = <R>(query: CompiledQuery<R>) => Promise<QueryResult<R>>;

export function returningWrites(
  db: Kysely<BookDatabase>,
  write: Write,
): Pick<BookStoreDriver, 'insertBook' | 'insertedBook' | 'updateBook'> {
  // Compiled once; parameters in the order of the values: title, author, year.
  const insert = db.insertInto('books').values({ title: '', author: '', year: 0 }).returning(BOOK_COLUMNS).compile();
  return {
    insertBook: (fields: BookFields) => write(bind(insert, [fields.title, fields.author, fields.year])),
    insertedBook: (result) => toStoredBook(result.rows[0] as BookRow),
    updateBook: (id, changes) =>
      write(db.updateTable('books').set(changes).where('id', '=', id).returning(BOOK_COLUMNS).compile()),
  };
}
