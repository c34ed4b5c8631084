// Requests that arrive together share queries (DataLoader, no cache). The HTTP server answers
// a turn's requests together, so their reads and writes can go in one round trip instead of
// one each: one pooled connection, one write and one read on its socket, one result to parse.
// No cache: each batch is a new query, sent after every request in it arrived, so it sees
// every write acknowledged before.
//
// The one place that asks which optional capabilities the driver has: GET /book/:id batched
// where it reads several ids in one query (PostgreSQL, MySQL), POST /book where it inserts
// several books in one statement (PostgreSQL, MariaDB ≥ 10.5), with or without an
// Idempotency-Key (their keys claimed in one statement, then the books and their answers in
// one transaction);
// list pages on every store.
//
// Each batch knows which request asked for each of its parts (src/tracing/shared-loader.ts), and
// runs each query as serving those requests: the whole batch, or, when a book is written
// alone after a refused batch, only its own request. So with tracing on, each request's trace
// shows the query that served it.
import type { BookFields, VersionedBook } from '../books/book.js';
import { sharedLoader, type Loader } from '../tracing/shared-loader.js';
import { NO_TRACING, type BatchRequests, type Tracing } from '../tracing/tracing.js';
import { KeyTakenOverError, type BookPage, type BookStore, type KeyClaim, type KeyedRequest, type KeyedWrite } from './book-store.js';
import { BookStoreLayer } from './book-store-layer.js';
import type { BookStoreDriver } from './driver.js';
import { StatementRefusedError } from './errors.js';

/** Most ids one batched read asks for; more requests in one turn make several queries. */
const MAX_IDS_PER_READ = 64;
/** Most books one batched insert writes. */
const MAX_BOOKS_PER_INSERT = 64;

type InsertBooks = NonNullable<BookStoreDriver['insertBooks']>;
type BatchingDriver = Pick<BookStoreDriver, 'selectByIds' | 'insertBooks' | 'claimKeys' | 'transaction'>;

interface KeyedInsert {
  fields: BookFields;
  idempotency: KeyedWrite<VersionedBook>;
}

export class BatchedBookStore extends BookStoreLayer {
  /** The reads of one turn in one query, where the driver can. */
  private readonly booksById: Loader<bigint, VersionedBook | undefined> | undefined;
  /** List pages asked for together: one query per distinct page (`afterId:limit`). */
  private readonly pages: Loader<string, BookPage>;
  /** One turn's books in one INSERT, where the driver can. */
  private readonly inserts: Loader<BookFields, VersionedBook> | undefined;
  /** One turn's Idempotency-Keys claimed in one statement, where the driver can. */
  private readonly claims: Loader<KeyedRequest, KeyClaim> | undefined;
  /** One turn's books with keys, and their answers, in one transaction, where the driver can. */
  private readonly keyedInserts: Loader<KeyedInsert, VersionedBook> | undefined;

  constructor(inner: BookStore, driver: BatchingDriver, tracing: Tracing = NO_TRACING) {
    super(inner);
    const { selectByIds, insertBooks, claimKeys } = driver;
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
      sharedLoader(tracing, (books: readonly BookFields[], requests) => this.insertTogether(books, insertBooks, requests), {
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
      sharedLoader(tracing, (items: readonly KeyedInsert[], requests) => this.insertKeyedTogether(items, driver.transaction, requests), {
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
  private async insertTogether(books: readonly BookFields[], insertBooks: InsertBooks, requests: BatchRequests): Promise<(VersionedBook | Error)[]> {
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
    transaction: BookStoreDriver['transaction'],
    requests: BatchRequests,
  ): Promise<(VersionedBook | Error)[]> {
    const insertAlone = ({ fields, idempotency }: KeyedInsert, index: number) =>
      requests.one(index, () => this.inner.create(fields, idempotency)).catch(toError);
    if (items.length === 1) return [await insertAlone(items[0]!, 0)];
    try {
      return await requests.all(() =>
        transaction(async (tx) => {
          if (!tx.insertBooks || !tx.storeAnswers) throw new Error('the driver has no batched keyed writes');
          const books = matchRows(
            items.map((item) => item.fields),
            await tx.insertBooks(items.map((item) => item.fields)),
          );
          const answers = books.map((book, i) => {
            if (book instanceof Error) throw book;
            const { idempotency } = items[i]!;
            return { request: idempotency.request, answer: idempotency.answer(book)! };
          });
          if ((await tx.storeAnswers(answers)) < items.length) throw new KeyTakenOverError();
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
