// The book operations over a BookStoreDriver, the same for every database: what differs
// between databases is the driver's. Nothing else: requests that arrive together share
// queries in batched-book-store.ts, conflicts are retried in retrying-book-store.ts, and
// open-store.ts puts the three together.
import { sql } from 'kysely';
import type { BookFields } from '../books/book.js';
import type { BookStore } from './book-store.js';
import type { BookStoreDriver } from './driver.js';

export function bookRepository(driver: BookStoreDriver): BookStore {
  return {
    create: (fields) => driver.insertBook(fields),
    listPageJson: (afterId, limit) => driver.selectPage(afterId, limit),
    get: (id) => driver.selectBook(id),
    update(id, changes) {
      // Only the book's own fields, and only those given: nothing to write is a read.
      const values: Partial<BookFields> = {};
      if (changes.title !== undefined) values.title = changes.title;
      if (changes.author !== undefined) values.author = changes.author;
      if (changes.year !== undefined) values.year = changes.year;
      if (Object.keys(values).length === 0) return driver.selectBook(id);
      return driver.updateBook(id, values);
    },
    delete: (id) => driver.deleteBook(id),
    async ping() {
      await sql`select 1`.execute(driver.db);
    },
    poolStats: () => driver.poolStats(),
    nodeUse: () => driver.nodeUse(),
    close: () => driver.close(),
  };
}
