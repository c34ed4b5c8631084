// Speed path `batched-queries`: requests that arrive together share queries (DataLoader, no
// cache). The HTTP server answers a turn's requests together (answer-in-turns), so their reads
// and writes can go in one round trip instead of one each: one pooled connection, one write and
// one read on its socket, one result to parse. No cache: each batch is a new query, sent after
// every request in it arrived, so it sees every write acknowledged before.
//
// Why: on PostgreSQL the Node side of a query, not the database, was the cost. Measured
// (docs/benchmarks-changes.md, "Requests that arrive together share queries"): PostgreSQL
// `GET /book/:id` 3,499 → 11,812 req/s pinned, `GET /books` 1,297 → 4,921; SQLite `GET /books`
// 8,586 → 11,807. MariaDB ≥ 10.5's creates together in one INSERT … RETURNING ("MariaDB:
// creates together in one INSERT … RETURNING"): `POST /book` 3,519 → 10,417 req/s, keyed
// `POST /book` 901–1,050 → 4,015–5,840; PostgreSQL's keyed creates batched: 1.20× Go/Gin's plain
// `POST /book` per core (the table's "Idempotency-Key and conditional requests" row).
//
// What is shared: GET /book/:id where the database reads several ids in one query (PostgreSQL,
// MySQL); POST /book where it inserts several books in one statement (PostgreSQL, MariaDB ≥
// 10.5), with or without an Idempotency-Key (their keys claimed in one statement, then the books
// and their answers in one transaction); list pages on every store. The statements are the
// database's batch statements (statements.ts, postgres.ts, mysql.ts), the one place that knows
// which a database has.
//
// Stands in for: each request's own query, sent by the plain repository
// (src/store/book-repository.ts), which this layer wraps and falls back on. Plugs into
// FastPaths.shareQueries (src/seams.ts): openStore puts this layer around the repository,
// inside the retries, so each request's share of a batch is retried on its own.
//
// Each batch knows which request asked for each of its parts (src/tracing/shared-loader.ts), and
// runs each query as serving those requests: the whole batch, or, when a book is written
// alone after a refused batch, only its own request. The statements run on the driver as the
// repository gets it (traced), so with tracing on each request's trace shows the query that
// served it.
import type { BookFields, VersionedBook } from '../../books/book.js';
import { KeyTakenOverError, type BookPage, type BookStore, type KeyClaim, type KeyedRequest, type KeyedWrite } from '../../store/book-store.js';
import { BookStoreLayer } from '../../store/book-store-layer.js';
import type { BookStoreDriver } from '../../store/driver.js';
import { sharedLoader, type Loader } from '../../tracing/shared-loader.js';
import { NO_TRACING, type BatchRequests, type Tracing } from '../../tracing/tracing.js';
import { MAX_BATCH, StatementRefusedError, type BatchStatements } from './statements.js';

/** Most ids one batched read asks for, and most books or keys one batched write takes: more requests in one turn make several. */
const MAX_IDS_PER_READ = MAX_BATCH;
const MAX_BOOKS_PER_INSERT = MAX_BATCH;

type InsertBooks = NonNullable<BatchStatements['insertBooks']>;

/**
 * The batch statements of the driver's database, as the node in use is now (MySQL: whether it
 * has INSERT … RETURNING); undefined for SQLite, whose reads and writes are synchronous calls
 * (its writes share commits through the group-commit path instead). Each database's are loaded
 * only when a store of its kind opens: PostgreSQL's use pg, which a SQLite service never loads.
 */
export async function batchStatementsFor(driver: BookStoreDriver): Promise<BatchStatements | undefined> {
  switch (driver.databaseSystem()) {
    case 'postgresql':
      return (await import('./postgres.js')).postgresBatchStatements(driver);
    case 'mysql':
    case 'mariadb':
      return (await import('./mysql.js')).mysqlBatchStatements(driver);
    case 'sqlite':
      return undefined;
  }
}

/** The batching layer around `store` (the repository over `driver`), with the batch statements of the driver's database. */
export async function shareQueries(store: BookStore, driver: BookStoreDriver, tracing: Tracing): Promise<BookStore> {
  return new BatchedBookStore(store, driver, await batchStatementsFor(driver), tracing);
}

interface KeyedInsert {
  fields: BookFields;
  idempotency: KeyedWrite<VersionedBook>;
}

export class BatchedBookStore extends BookStoreLayer {
  /** The reads of one turn in one query, where the database can. */
  private readonly booksById: Loader<bigint, VersionedBook | undefined> | undefined;
  /** List pages asked for together: one query per distinct page (`afterId:limit`). */
  private readonly pages: Loader<string, BookPage>;
  /** One turn's books in one INSERT, where the database can. */
  private readonly inserts: Loader<BookFields, VersionedBook> | undefined;
  /** One turn's Idempotency-Keys claimed in one statement, where the database can. */
  private readonly claims: Loader<KeyedRequest, KeyClaim> | undefined;
  /** One turn's books with keys, and their answers, in one transaction, where the database can. */
  private readonly keyedInserts: Loader<KeyedInsert, VersionedBook> | undefined;

  /**
   * `driver`: the one `inner` runs on; `statements`: its database's batch statements (none for
   * SQLite: only list pages are shared there).
   */
  constructor(inner: BookStore, driver: BookStoreDriver, statements: BatchStatements | undefined, tracing: Tracing = NO_TRACING) {
    super(inner);
    const { selectByIds, insertBooks, claimKeys, storeAnswers } = statements ?? {};
    this.booksById =
      selectByIds &&
      sharedLoader(
        tracing,
        async (ids: readonly bigint[], requests) => {
          const found = new Map<bigint, VersionedBook>();
          for (const book of await requests.all(() => selectByIds(ids))) found.set(book.id, book);
          return ids.map((id) => found.get(id));
        },
        { cache: false, maxBatchSize: MAX_IDS_PER_READ },
      );
    // Clients that list the collection at the same moment (a dashboard on many screens, a
    // retry storm) get the page one query read, started after each of them asked.
    this.pages = sharedLoader(
      tracing,
      async (keys: readonly string[], requests) => {
        const queries = new Map<string, Promise<BookPage>>();
        for (const key of new Set(keys)) {
          const [afterId, limit] = key.split(':');
          queries.set(
            key,
            requests.some(
              (index) => keys[index] === key,
              () => this.inner.listPageJson(BigInt(afterId!), Number(limit)),
            ),
          );
        }
        // One failed page fails only the requests that asked for it.
        return Promise.all(keys.map((key) => queries.get(key)!.catch((error: unknown) => toError(error))));
      },
      { cache: false },
    );
    this.inserts =
      insertBooks &&
      sharedLoader(tracing, (books: readonly BookFields[], requests) => this.insertTogether(books, (batch) => insertBooks(driver.runWrite, batch), requests), {
        cache: false,
        maxBatchSize: MAX_BOOKS_PER_INSERT,
      });
    this.claims =
      claimKeys &&
      sharedLoader(
        tracing,
        async (keyed: readonly KeyedRequest[], requests) => {
          const claimed = new Set(await requests.all(() => claimKeys(keyed)));
          // A key that exists already (a repeat, an expired or abandoned key) is looked at alone.
          return Promise.all(
            keyed.map((request, index) =>
              claimed.has(request) ? { kind: 'claimed' as const } : requests.one(index, () => this.inner.claimKey(request)).catch(toError),
            ),
          );
        },
        { cache: false, maxBatchSize: MAX_BOOKS_PER_INSERT },
      );
    this.keyedInserts =
      insertBooks &&
      storeAnswers &&
      sharedLoader(tracing, (items: readonly KeyedInsert[], requests) => this.insertKeyedTogether(items, driver, insertBooks, storeAnswers, requests), {
        cache: false,
        maxBatchSize: MAX_BOOKS_PER_INSERT,
      });
  }

  /** A book with an Idempotency-Key is written in a transaction of its own, with its answer. */
  override create(fields: BookFields, idempotency?: KeyedWrite<VersionedBook>): Promise<VersionedBook> {
    if (idempotency) return this.keyedInserts ? this.keyedInserts.load({ fields, idempotency }) : this.inner.create(fields, idempotency);
    return this.inserts ? this.inserts.load(fields) : this.inner.create(fields);
  }

  override claimKey(request: KeyedRequest): Promise<KeyClaim> {
    return this.claims ? this.claims.load(request) : this.inner.claimKey(request);
  }

  override listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.pages.load(`${afterId}:${limit}`);
  }

  override get(id: bigint): Promise<VersionedBook | undefined> {
    return this.booksById ? this.booksById.load(id) : this.inner.get(id);
  }

  /**
   * The books in one INSERT (one commit); each request gets a row with its own fields (rows
   * with equal fields are interchangeable). When the database refused the statement (one book
   * it cannot store), each book is inserted alone, so only that book's request fails.
   */
  private async insertTogether(
    books: readonly BookFields[],
    insertBooks: (books: readonly BookFields[]) => Promise<VersionedBook[]>,
    requests: BatchRequests,
  ): Promise<(VersionedBook | Error)[]> {
    const insertAlone = (book: BookFields, index: number) => requests.one(index, () => this.inner.create(book)).catch(toError);
    if (books.length === 1) return [await insertAlone(books[0]!, 0)];
    let stored;
    try {
      stored = await requests.all(() => insertBooks(books));
    } catch (error) {
      // Refused by the database: rolled back, so each book can be tried alone. Anything else
      // (a conflict, a lost store, a timeout after which the INSERT may yet commit) is every
      // request's answer, which the retry layer turns into a retry or a 503.
      if (error instanceof StatementRefusedError) return Promise.all(books.map(insertAlone));
      return books.map(() => toError(error));
    }
    return matchRows(books, stored);
  }

  /**
   * Books with Idempotency-Keys in one transaction: one INSERT, then every answer stored with
   * its key in one UPDATE, so each answer is stored if and only if its book is. When the
   * database refused the INSERT, or an attempt no longer holds its key, the transaction is
   * rolled back and each book is written alone (in a transaction of its own).
   */
  private async insertKeyedTogether(
    items: readonly KeyedInsert[],
    driver: BookStoreDriver,
    insertBooks: InsertBooks,
    storeAnswers: BatchStatements['storeAnswers'],
    requests: BatchRequests,
  ): Promise<(VersionedBook | Error)[]> {
    const insertAlone = ({ fields, idempotency }: KeyedInsert, index: number) =>
      requests.one(index, () => this.inner.create(fields, idempotency)).catch(toError);
    if (items.length === 1) return [await insertAlone(items[0]!, 0)];
    try {
      return await requests.all(() =>
        driver.transaction(async (tx) => {
          const books = matchRows(
            items.map((item) => item.fields),
            await insertBooks(tx.run, items.map((item) => item.fields)),
          );
          const answers = books.map((book, i) => {
            if (book instanceof Error) throw book;
            const { idempotency } = items[i]!;
            return { request: idempotency.request, answer: idempotency.answer(book)! };
          });
          if ((await storeAnswers(tx.run, answers)) < items.length) throw new KeyTakenOverError();
          return books;
        }),
      );
    } catch (error) {
      if (error instanceof StatementRefusedError || error instanceof KeyTakenOverError) return Promise.all(items.map(insertAlone));
      return items.map(() => toError(error));
    }
  }
}

/** Each book asked for gets a row written with its own fields (rows with equal fields are interchangeable). */
function matchRows(asked: readonly BookFields[], stored: readonly VersionedBook[]): (VersionedBook | Error)[] {
  const written = new Map<string, VersionedBook[]>();
  for (const book of stored) {
    const key = fieldsKey(book);
    const same = written.get(key);
    if (same) same.push(book);
    else written.set(key, [book]);
  }
  return asked.map((book) => written.get(fieldsKey(book))?.shift() ?? new Error('a batched insert returned fewer rows than it wrote'));
}

/** DataLoader answers a key with an Error instance by rejecting that key's load with it. */
function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error), { cause: error });
}

function fieldsKey(book: BookFields): string {
  return JSON.stringify([book.title, book.author, book.year]);
}
