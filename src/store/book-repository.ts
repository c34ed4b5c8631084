// The book operations over a BookStoreDriver, the same for every database: what differs
// between databases is the driver's. Nothing else: requests that arrive together share
// queries in batched-book-store.ts, conflicts are retried in retrying-book-store.ts, and
// open-store.ts puts the three together.
import { sql } from 'kysely';
import type { BookFields, StoredBook } from '../books/book.js';
import type { BookPage, BookStore, NodeUse, PoolStats } from './book-store.js';
import type { BookStoreDriver } from './driver.js';

export class BookRepository implements BookStore {
  constructor(private readonly driver: BookStoreDriver) {}

  create(fields: BookFields): Promise<StoredBook> {
    return this.driver.insertBook(fields);
  }

  listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.driver.selectPage(afterId, limit);
  }

  get(id: bigint): Promise<StoredBook | undefined> {
    return this.driver.selectBook(id);
  }

  update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    // Only the book's own fields, and only those given: nothing to write is a read.
    const values: Partial<BookFields> = {};
    if (changes.title !== undefined) values.title = changes.title;
    if (changes.author !== undefined) values.author = changes.author;
    if (changes.year !== undefined) values.year = changes.year;
    if (Object.keys(values).length === 0) return this.get(id);
    return this.driver.updateBook(id, values);
  }

  delete(id: bigint): Promise<boolean> {
    return this.driver.deleteBook(id);
  }

  async ping(): Promise<void> {
    await sql`select 1`.execute(this.driver.db);
  }

  poolStats(): PoolStats | undefined {
    return this.driver.poolStats();
  }

  nodeUse(): NodeUse | undefined {
    return this.driver.nodeUse();
  }

  close(): Promise<void> {
    return this.driver.close();
  }
}
