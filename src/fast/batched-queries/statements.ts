// The batch statements of the speed path batched-queries (index.ts says why, with its
// measurements, and plugs them in through FastPaths.shareQueries): what the batching layer
// sends for several requests at once, per database (postgres.ts, mysql.ts), built from what
// every driver has (its Kysely `db` to compile them, its `runRead`/`runWrite` and a
// transaction's `run` to send them, so tracing's spans of those show them too). They stand in
// for the plain driver's one-book statements (src/store/<kind>/index.ts): without this path
// each request sends its own.
import type { BookFields, VersionedBook } from '../../books/book.js';
import type { KeyedRequest, StoredAnswer } from '../../store/book-store.js';
import type { RunQuery } from '../../store/books-table.js';

/** Most ids one batched read asks for, and most books or keys one batched write takes. */
export const MAX_BATCH = 64;

/**
 * The database answered a statement with an error of its own (not a lost connection, not a
 * conflict): the statement was rolled back and nothing of it was applied. The batch statements
 * wrap the error in this where the batching layer may then try the statement's parts one by one.
 */
export class StatementRefusedError extends Error {
  override name = 'StatementRefusedError';
  constructor(options: { cause: unknown }) {
    super('the database refused the statement; nothing of it was applied', options);
  }
}

export interface BatchStatements {
  /** The books with these ids (any order, the missing ones left out), in one query. */
  selectByIds(ids: readonly bigint[]): Promise<VersionedBook[]>;
  /**
   * Inserts several books in one statement (all or none) on `run` (the driver's `runWrite`, or
   * a transaction's `run`): each book as written, in any order. Rejects with
   * StatementRefusedError when the database refused it, or nothing was sent (a node without
   * RETURNING), so that nothing was written. Undefined where the database cannot say which id
   * each row got.
   */
  insertBooks: ((run: RunQuery, books: readonly BookFields[]) => Promise<VersionedBook[]>) | undefined;
  /**
   * Claims the keys of several requests in one statement (committed at once): the requests
   * whose key it claimed. Undefined where the database cannot say which rows an INSERT that
   * ignores duplicates wrote.
   */
  claimKeys: ((requests: readonly KeyedRequest[]) => Promise<KeyedRequest[]>) | undefined;
  /** Stores several answers with their claimed keys in one statement on a transaction's `run`: how many keys were still held. */
  storeAnswers(run: RunQuery, answers: ReadonlyArray<{ request: KeyedRequest; answer: StoredAnswer }>): Promise<number>;
}
