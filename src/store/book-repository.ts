// The book operations over a BookStoreDriver, the same for every database: what differs
// between databases is the driver's. Nothing else: conflicts are retried in
// retrying-book-store.ts, and open-store.ts puts the two together (with, between them, the
// layer of any speed path that is on: src/seams.ts).
//
// A write with an Idempotency-Key runs in one transaction with the storing of its answer
// (idempotency-keys.ts), so the answer is stored if and only if the write committed.
import { sql } from 'kysely';
import type { BookFields } from '../books/book.js';
import { KeyTakenOverError, type BatchOperation, type BatchOutcome, type BatchResult, type BookStore, type DeleteOutcome, type KeyedWrite, type UpdateOutcome } from './book-store.js';
import { changeLog } from './change-log.js';
import type { BookOperations, BookStoreDriver, TransactionScope } from './driver.js';
import { ABANDONED_CLAIM_MS, type KeyLifetimes } from './idempotency-keys.js';

export interface RepositoryOptions {
  /** IDEMPOTENCY_TTL in milliseconds. */
  idempotencyTtlMs: number;
}

export const DEFAULT_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export function bookRepository(driver: BookStoreDriver, { idempotencyTtlMs }: RepositoryOptions = { idempotencyTtlMs: DEFAULT_IDEMPOTENCY_TTL_MS }): BookStore {
  const keys = driver.idempotencyKeys;
  const changes = changeLog(driver);
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
    async applyBatch(operations, idempotency) {
      try {
        if (!idempotency) return await driver.transaction((tx) => applyAll(tx, operations));
        return await withKey(idempotency, (tx) => applyAll(tx, operations));
      } catch (error) {
        if (!(error instanceof BatchFailed)) throw error;
        // Rolled back, the key's release with it: let go of the key, as for a single write that wrote nothing.
        if (idempotency) await keys.release(driver.runWrite, idempotency.request);
        return { kind: 'failed', operation: error.operation, outcome: error.outcome };
      }
    },
    delete(id, { ifVersion, idempotency } = {}) {
      if (!idempotency) return deleteOn(driver, id, ifVersion);
      return withKey(idempotency, (tx) => deleteOn(tx, id, ifVersion));
    },
    claimKey: (request) => keys.claim(driver.runWrite, driver.runRead, request, lifetimes),
    releaseKey: (request) => keys.release(driver.runWrite, request),
    purgeExpiredKeys: () => keys.purge(driver.runWrite, idempotencyTtlMs),
    changeFeedState: () => changes.state(),
    changesAfter: (position, limit) => changes.after(position, limit),
    pruneChanges: (retentionMs) => changes.prune(retentionMs),
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

/** Thrown inside a batch's transaction to roll it back: the operation that found no book or another version. */
class BatchFailed extends Error {
  constructor(
    readonly operation: number,
    readonly outcome: 'missing' | 'changed',
  ) {
    super(`batch operation ${operation}: ${outcome}`);
  }
}

/** Creates one statement inserts at most (3 parameters each). */
const INSERTS_PER_STATEMENT = 500;

/** Every operation on `tx`, in order; throws BatchFailed at the first that cannot apply. */
async function applyAll(tx: TransactionScope, operations: readonly BatchOperation[]): Promise<BatchOutcome> {
  const results: BatchResult[] = [];
  for (let index = 0; index < operations.length; index++) {
    const operation = operations[index]!;
    if (operation.kind === 'create') {
      // Consecutive creates: one multi-row insert where the database can (insertBooks).
      let end = index + 1;
      while (end < operations.length && end - index < INSERTS_PER_STATEMENT && operations[end]!.kind === 'create') end++;
      const fields = (operations.slice(index, end) as Array<Extract<BatchOperation, { kind: 'create' }>>).map((create) => create.fields);
      const books = fields.length > 1 && tx.insertBooks ? await tx.insertBooks(fields) : [await tx.insertBook(fields[0]!)];
      if (books.length < fields.length) end = index + books.length;
      for (const book of books) results.push({ kind: 'created', book });
      index = end - 1;
      continue;
    }
    const outcome =
      operation.kind === 'update'
        ? await updateOn(tx, operation.id, operation.changes, operation.ifVersion)
        : await deleteOn(tx, operation.id, operation.ifVersion);
    if (outcome === 'missing' || outcome === 'changed') throw new BatchFailed(index, outcome);
    results.push(outcome === 'deleted' ? { kind: 'deleted' } : { kind: 'updated', book: outcome });
  }
  return { kind: 'applied', results };
}
