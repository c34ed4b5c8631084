// Writes with RETURNING (SQLite, PostgreSQL): the row as written comes back with the write,
// in the same statement, so the answer is exactly our own write.
import type { Kysely } from 'kysely';
import { bind, toVersionedBook, VERSIONED_BOOK_COLUMNS, type BookDatabase, type RunQuery } from './books-table.js';
import { updateById } from './by-id.js';
import type { BookOperations } from './driver.js';

export type ReturningOperations = Pick<BookOperations, 'insertBook' | 'insertBooks' | 'updateBook'>;

/** INSERT books … RETURNING the book as written; parameters in the order of the values: title, author, year. */
export function insertBookQuery(db: Kysely<BookDatabase>) {
  return db.insertInto('books').values({ title: '', author: '', year: 0 }).returning(VERSIONED_BOOK_COLUMNS).compile();
}

/** The insert and the update, compiled once where they can be, for any way to run them (the pool, or a transaction). */
export function returningWrites(db: Kysely<BookDatabase>): (write: RunQuery) => ReturningOperations {
  const insert = insertBookQuery(db);
  return (write) => ({
    async insertBook(fields) {
      const { rows } = await write(bind(insert, [fields.title, fields.author, fields.year]));
      return toVersionedBook(rows[0]!);
    },
    async insertBooks(books) {
      const { rows } = await write(db.insertInto('books').values(books.map(({ title, author, year }) => ({ title, author, year }))).returning(VERSIONED_BOOK_COLUMNS).compile());
      // One statement hands out its ids in the order of its rows (a sequence, SQLite's rowid);
      // RETURNING's order is not promised, the ids' is.
      const written = rows.map(toVersionedBook).sort((a, b) => (a.id < b.id ? -1 : 1));
      if (written.length !== books.length || written.some((book, i) => book.title !== books[i]!.title || book.year !== books[i]!.year)) {
        throw new Error('a multi-row insert returned its rows in an order other than its ids');
      }
      return written;
    },
    async updateBook(id, changes, ifVersion) {
      const { rows } = await write(updateById(db, id, changes, ifVersion).returning(VERSIONED_BOOK_COLUMNS).compile());
      return rows[0] && toVersionedBook(rows[0]);
    },
  });
}
