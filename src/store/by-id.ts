// A book read, updated or deleted by its id, the same on every database. Every write of a
// book raises its version, and a write with `ifVersion` applies only while the book is at one
// of those versions: the check and the write are one statement, so no other write can come
// between them. The hot queries are compiled once; each call only binds the id.
import type { Kysely, UpdateQueryBuilder, UpdateResult } from 'kysely';
import type { BookFields } from '../books/book.js';
import { bind, toVersionedBook, VERSIONED_BOOK_COLUMNS, type BookDatabase, type RunQuery } from './books-table.js';
import type { BookOperations } from './driver.js';

export type ByIdOperations = Pick<BookOperations, 'selectBook' | 'deleteBook'>;

/** The read and the delete by id, compiled once, for any pair of ways to run them (the pool, or a transaction). */
export function byIdQueries(db: Kysely<BookDatabase>): (read: RunQuery, write: RunQuery) => ByIdOperations {
  const selectById = db.selectFrom('books').select(VERSIONED_BOOK_COLUMNS).where('id', '=', 0n).compile();
  const deleteById = db.deleteFrom('books').where('id', '=', 0n).compile();
  return (read, write) => ({
    async selectBook(id) {
      const row = (await read(bind(selectById, [id]))).rows[0];
      return row && toVersionedBook(row);
    },
    async deleteBook(id, ifVersion) {
      const query = ifVersion === undefined ? bind(deleteById, [id]) : db.deleteFrom('books').where('id', '=', id).where('version', 'in', ifVersion).compile();
      const { numAffectedRows } = await write(query);
      return (numAffectedRows ?? 0n) > 0n;
    },
  });
}

/** UPDATE books: the given fields, the version raised by one; only at one of `ifVersion` when given. */
export function updateById(
  db: Kysely<BookDatabase>,
  id: bigint,
  changes: Partial<BookFields>,
  ifVersion: readonly number[] | undefined,
): UpdateQueryBuilder<BookDatabase, 'books', 'books', UpdateResult> {
  const update = db
    .updateTable('books')
    .set((eb) => ({ ...changes, version: eb('version', '+', 1) }))
    .where('id', '=', id);
  return ifVersion === undefined ? update : update.where('version', 'in', ifVersion);
}
