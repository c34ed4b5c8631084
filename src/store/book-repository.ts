// The book operations over a BookStoreDriver, the same for every database: what differs
// between databases is the driver's. Nothing else: conflicts are retried in
// retrying-book-store.ts, and open-store.ts puts the two together (with, between them, the
// layer of any speed path that is on: src/seams.ts).
//
// A write with an Idempotency-Key runs in one transaction with the storing of its answer
// (idempotency-keys.ts), so the answer is stored if and only if the write committed.
import { sql } from 'kysely';
import type { BookFields } from '../books/book.js';
import { KeyTakenOverError, type BookStore, type DeleteOutcome, type KeyedWrite, type UpdateOutcome } from './book-store.js';
import type { BookOperations, BookStoreDriver, TransactionScope } from './driver.js';
import { ABANDONED_CLAIM_MS, type KeyLifetimes } from './idempotency-keys.js';

export interface RepositoryOptions {
  /** IDEMPOTENCY_TTL in milliseconds. */
  idempotencyTtlMs: number;
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export function bookRepository(driver: BookStoreDriver, { idempotencyTtlMs }: RepositoryOptions = { idempotencyTtlMs: DEFAULT_IDEMPOTENCY_TTL_MS }): BookStore {
  const keys = driver.idempotencyKeys;
  const lifetimes: KeyLifetimes = { ttlMs: idempotencyTtlMs, abandonedAfterMs: Math.min(ABANDONED_CLAIM_MS, idempotencyTtlMs) };

  /** `write` in one transaction with the storing of its answer under the claimed key. */
  function withKey<Outcome>(keyed: KeyedWrite<Outcome>, write: (tx: TransactionScope) => Promise<Outcome>): Promise<Outcome> {
    return driver.transaction(async (tx) => {
      const outcome = await write(tx);
      const answer = keyed.answer(outcome);
      if (answer === undefined) await keys.release(tx.run, keyed.request);
      else if (!(await keys.storeAnswer(tx.run, keyed.request, answer))) throw new KeyTakenOverError();
      return outcome;
    });
  }

  return {
    create(fields, idempotency) {
      if (!idempotency) return driver.insertBook(fields);
      return withKey(idempotency, (tx) => tx.insertBook(fields));
    },
    listPageJson: (afterId, limit) => driver.selectPage(afterId, limit),
    findBooks: (query) => driver.selectBooks(query),
    get: (id) => driver.selectBook(id),
    update(id, changes, { ifVersion, idempotency } = {}) {
      if (!idempotency) return updateOn(driver, id, changes, ifVersion);
      return withKey(idempotency, (tx) => updateOn(tx, id, changes, ifVersion));
    },
    delete(id, { ifVersion, idempotency } = {}) {
      if (!idempotency) return deleteOn(driver, id, ifVersion);
      return withKey(idempotency, (tx) => deleteOn(tx, id, ifVersion));
    },
    claimKey: (request) => keys.claim(driver.runWrite, driver.runRead, request, lifetimes),
    releaseKey: (request) => keys.release(driver.runWrite, request),
    purgeExpiredKeys: () => keys.purge(driver.runWrite, idempotencyTtlMs),
    async ping() {
      await sql`select 1`.execute(driver.db);
      const unwritable = await driver.unwritable?.();
      if (unwritable !== undefined) throw new Error(unwritable);
    },
    poolStats: () => driver.poolStats(),
    nodeUse: () => driver.nodeUse(),
    close: () => driver.close(),
  };
}

async function updateOn(ops: BookOperations, id: bigint, changes: Partial<BookFields>, ifVersion: readonly number[] | undefined): Promise<UpdateOutcome> {
  // Only the book's own fields, and only those given: nothing to write is a read.
  const values: Partial<BookFields> = {};
  if (changes.title !== undefined) values.title = changes.title;
  if (changes.author !== undefined) values.author = changes.author;
  if (changes.year !== undefined) values.year = changes.year;
  if (Object.keys(values).length === 0 || ifVersion?.length === 0) {
    const book = await ops.selectBook(id);
    if (!book) return 'missing';
    return ifVersion && !ifVersion.includes(book.version) ? 'changed' : book;
  }
  const written = await ops.updateBook(id, values, ifVersion);
  if (written) return written;
  // No row matched: gone, or (with a condition) at another version. Nothing was written either way.
  return ifVersion !== undefined && (await ops.selectBook(id)) ? 'changed' : 'missing';
}

async function deleteOn(ops: BookOperations, id: bigint, ifVersion: readonly number[] | undefined): Promise<DeleteOutcome> {
  if (ifVersion?.length !== 0 && (await ops.deleteBook(id, ifVersion))) return 'deleted';
  return ifVersion !== undefined && (await ops.selectBook(id)) ? 'changed' : 'missing';
}
