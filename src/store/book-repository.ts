// The BookStore: the book operations, the same for every database. What differs between
// databases (how a query runs, inserts, updates, the list page, errors) is the driver's.
// A conflict (deadlock, serialization failure, a Galera certification failure) rolled the
// work back: it is run again (CONFLICTS in retry.ts) before the client sees a 503.
// Reads asked for together share queries (DataLoader, no cache): the books of one turn's
// GET /book/:id requests in one query on PostgreSQL and MySQL, and one query per distinct
// list page on every store. Creates asked for together on PostgreSQL are one INSERT.
import DataLoader from 'dataloader';
import { sql } from 'kysely';
import type { BookFields, StoredBook } from '../books/book.js';
import type { BookPage, BookStore, NodeUse, PoolStats } from './book-store.js';
import type { BookStoreDriver } from './driver.js';
import { StatementRefusedError, StoreUnavailableError, rethrowStoreError } from './errors.js';
import { CONFLICTS, retrier, type Retrier } from './retry.js';

/** Most ids one batched read asks for; more requests in one turn make several queries. */
const MAX_IDS_PER_READ = 64;
/** Most books one batched insert writes. */
const MAX_BOOKS_PER_INSERT = 64;

export class BookRepository implements BookStore {
  /** GET /book/:id on a database across a network: the reads of one turn in one query. */
  private readonly booksById: DataLoader<bigint, StoredBook | undefined> | undefined;
  /** List pages asked for together: one query per distinct page (`afterId:limit`). */
  private readonly pages: DataLoader<string, BookPage>;
  /** POST /book where the database returns each inserted row: one turn's books in one INSERT. */
  private readonly inserts: DataLoader<BookFields, StoredBook> | undefined;
  /**
   * Runs work, again after a conflict (CONFLICTS). Then 503 when the store cannot be reached or
   * the conflicts did not stop, the error itself (500) otherwise.
   */
  private readonly conflicts: Retrier;

  constructor(private readonly driver: BookStoreDriver) {
    const classify = driver.classifyError;
    this.conflicts = retrier(CONFLICTS, {
      classify,
      giveUp(error) {
        if (classify(error) === 'conflict') throw new StoreUnavailableError({ cause: error });
        return rethrowStoreError(error, classify);
      },
    });
    const { selectByIds } = driver;
    // Requests that arrive together (the HTTP server answers a turn's requests together) ask
    // for their books in one round trip instead of one each: one pooled connection, one write
    // and one read on its socket, one result to parse. No cache: each batch is a new query,
    // sent after every request in it arrived, so it sees every write acknowledged before.
    this.booksById =
      selectByIds &&
      new DataLoader(
        async (ids: readonly bigint[]) => {
          const found = new Map<bigint, StoredBook>();
          for (const book of await selectByIds(ids)) found.set(book.id, book);
          return ids.map((id) => found.get(id));
        },
        { cache: false, maxBatchSize: MAX_IDS_PER_READ },
      );
    // Clients that list the collection at the same moment (a dashboard on many screens, a
    // retry storm) get the page one query read, started after each of them asked.
    this.pages = new DataLoader(
      async (keys: readonly string[]) => {
        const queries = new Map<string, Promise<BookPage>>();
        for (const key of new Set(keys)) {
          const [afterId, limit] = key.split(':');
          queries.set(key, this.driver.selectPage(BigInt(afterId!), Number(limit)));
        }
        // One failed page fails only the requests that asked for it.
        return Promise.all(keys.map((key) => queries.get(key)!.catch((error: unknown) => toError(error))));
      },
      { cache: false },
    );
    const { insertBooks } = driver;
    this.inserts =
      insertBooks &&
      new DataLoader((books: readonly BookFields[]) => this.insertTogether(books, insertBooks), {
        cache: false,
        maxBatchSize: MAX_BOOKS_PER_INSERT,
      });
  }

  /**
   * The books in one INSERT (one commit); each request gets a row with its own fields (rows
   * with equal fields are interchangeable). When the database refused the statement (one book
   * it cannot store), each book is inserted alone, so only that book's request fails.
   */
  private async insertTogether(
    books: readonly BookFields[],
    insertBooks: NonNullable<BookStoreDriver['insertBooks']>,
  ): Promise<(StoredBook | Error)[]> {
    const insertAlone = (book: BookFields) => this.insertOne(book).catch(toError);
    if (books.length === 1) return [await insertAlone(books[0]!)];
    let stored;
    try {
      stored = await insertBooks(books);
    } catch (error) {
      // Refused by the database: rolled back, so each book can be tried alone. Anything else
      // (a conflict, a lost store, a timeout after which the INSERT may yet commit) is every
      // request's answer, which `run` turns into a retry or a 503.
      if (error instanceof StatementRefusedError) return Promise.all(books.map(insertAlone));
      return books.map(() => toError(error));
    }
    const written = new Map<string, StoredBook[]>();
    for (const book of stored) {
      const key = fieldsKey(book);
      const same = written.get(key);
      if (same) same.push(book);
      else written.set(key, [book]);
    }
    return books.map((book) => written.get(fieldsKey(book))?.shift() ?? new Error('a batched insert returned fewer rows than it wrote'));
  }

  private insertOne(values: BookFields): Promise<StoredBook> {
    return this.driver.insertBook(values);
  }

  poolStats(): PoolStats | undefined {
    return this.driver.poolStats();
  }

  nodeUse(): NodeUse | undefined {
    return this.driver.nodeUse();
  }

  async create(fields: BookFields): Promise<StoredBook> {
    const values = { title: fields.title, author: fields.author, year: fields.year };
    const { inserts } = this;
    return this.conflicts.run(() => (inserts ? inserts.load(values) : this.insertOne(values)));
  }

  async listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.conflicts.run(() => this.pages.load(`${afterId}:${limit}`));
  }

  async get(id: bigint): Promise<StoredBook | undefined> {
    const { booksById } = this;
    return this.conflicts.run(() => (booksById ? booksById.load(id) : this.driver.selectBook(id)));
  }

  async update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    const values: Partial<BookFields> = {};
    if (changes.title !== undefined) values.title = changes.title;
    if (changes.author !== undefined) values.author = changes.author;
    if (changes.year !== undefined) values.year = changes.year;
    if (Object.keys(values).length === 0) return this.get(id);
    return this.conflicts.run(() => this.driver.updateBook(id, values));
  }

  async delete(id: bigint): Promise<boolean> {
    return this.conflicts.run(() => this.driver.deleteBook(id));
  }

  async ping(): Promise<void> {
    await this.conflicts.run(() => sql`select 1`.execute(this.driver.db));
  }

  async close(): Promise<void> {
    await this.driver.close();
  }
}

/** DataLoader answers a key with an Error instance by rejecting that key's load with it. */
function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error), { cause: error });
}

function fieldsKey(book: BookFields): string {
  return JSON.stringify([book.title, book.author, book.year]);
}
