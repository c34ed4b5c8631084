// A book read or deleted by its id: the same two hot queries on every database, compiled once
// (each call only binds the id).
import type { Kysely } from 'kysely';
import { BOOK_COLUMNS } from '../books/book.js';
import { bind, toStoredBook, type BookDatabase, type RunQuery } from './books-table.js';
import type { BookStoreDriver } from './driver.js';

export function byIdQueries(db: Kysely<BookDatabase>, read: RunQuery, write: RunQuery): Pick<BookStoreDriver, 'selectBook' | 'deleteBook'> {
  const selectById = db.selectFrom('books').select(BOOK_COLUMNS).where('id', '=', 0n).compile();
  const deleteById = db.deleteFrom('books').where('id', '=', 0n).compile();
  return {
    async selectBook(id) {
      const row = (await read(bind(selectById, [id]))).rows[0];
      return row && toStoredBook(row);
    },
    async deleteBook(id) {
      const { numAffectedRows } = await write(bind(deleteById, [id]));
      return (numAffectedRows ?? 0n) > 0n;
    },
  };
}
