// The BookStore: the book operations, the same for every database. What differs between
// databases (how a query runs, inserts, updates, the list page, errors) is the driver's.
import { sql } from 'kysely';
import { BOOK_COLUMNS, type BookFields, type StoredBook } from '../books/book.js';
import type { BookPage, BookStore, PoolStats } from './book-store.js';
import { bind, toStoredBook } from './books-table.js';
import type { BookStoreDriver } from './driver.js';
import { rethrowStoreError } from './errors.js';

export class BookRepository implements BookStore {
  // The hot queries, built and compiled once instead of on every request.
  private readonly selectById;
  private readonly deleteById;

  constructor(private readonly driver: BookStoreDriver) {
    this.selectById = driver.db.selectFrom('books').select(BOOK_COLUMNS).where('id', '=', 0n).compile();
    this.deleteById = driver.db.deleteFrom('books').where('id', '=', 0n).compile();
  }

  /** 503 when the store cannot be reached, the error itself (500) otherwise. */
  private fail(error: unknown): never {
    return rethrowStoreError(error, this.driver.classifyError);
  }

  poolStats(): PoolStats | undefined {
    return this.driver.poolStats();
  }

  async create(fields: BookFields): Promise<StoredBook> {
    const values = { title: fields.title, author: fields.author, year: fields.year };
    try {
      return this.driver.insertedBook(await this.driver.insertBook(values), values);
    } catch (error) {
      return this.fail(error);
    }
  }

  async listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    try {
      const { rows } = await this.driver.selectPage(afterId, limit);
      return this.driver.decodePage(rows);
    } catch (error) {
      return this.fail(error);
    }
  }

  async get(id: bigint): Promise<StoredBook | undefined> {
    try {
      const { rows } = await this.driver.read(bind(this.selectById, [id]));
      const row = rows[0];
      return row && toStoredBook(row);
    } catch (error) {
      return this.fail(error);
    }
  }

  async update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    const values: Partial<BookFields> = {};
    if (changes.title !== undefined) values.title = changes.title;
    if (changes.author !== undefined) values.author = changes.author;
    if (changes.year !== undefined) values.year = changes.year;
    if (Object.keys(values).length === 0) return this.get(id);
    try {
      const row = (await this.driver.updateBook(id, values)).rows[0];
      return row && toStoredBook(row);
    } catch (error) {
      return this.fail(error);
    }
  }

  async delete(id: bigint): Promise<boolean> {
    try {
      const result = await this.driver.write(bind(this.deleteById, [id]));
      return (result.numAffectedRows ?? 0n) > 0n;
    } catch (error) {
      return this.fail(error);
    }
  }

  async ping(): Promise<void> {
    try {
      await sql`select 1`.execute(this.driver.db);
    } catch (error) {
      this.fail(error);
    }
  }

  async close(): Promise<void> {
    await this.driver.close();
  }
}
