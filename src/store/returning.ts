// Writes with RETURNING (SQLite, PostgreSQL): the row as written comes back with the write,
// in the same statement, so the answer is exactly our own write.
import type { Kysely } from 'kysely';
import { BOOK_COLUMNS, type BookFields } from '../books/book.js';
import { bind, toStoredBook, type BookDatabase, type RunQuery } from './books-table.js';
import type { BookStoreDriver } from './driver.js';

export function returningWrites(db: Kysely<BookDatabase>, write: RunQuery): Pick<BookStoreDriver, 'insertBook' | 'updateBook'> {
  // Compiled once; parameters in the order of the values: title, author, year.
  const insert = db.insertInto('books').values({ title: '', author: '', year: 0 }).returning(BOOK_COLUMNS).compile();
  return {
    async insertBook(fields: BookFields) {
      const { rows } = await write(bind(insert, [fields.title, fields.author, fields.year]));
      return toStoredBook(rows[0]!);
    },
    async updateBook(id, changes) {
      const { rows } = await write(db.updateTable('books').set(changes).where('id', '=', id).returning(BOOK_COLUMNS).compile());
      return rows[0] && toStoredBook(rows[0]);
    },
  };
}
