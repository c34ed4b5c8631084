// The outer layer of the BookStore: each operation runs again after a conflict (CONFLICTS in
// retry.ts: the work was rolled back and may succeed when run again), and here, in one place,
// a failure becomes what the HTTP side sees: StoreUnavailableError (503) when the store cannot
// be reached or the conflicts did not stop, the error itself (500) otherwise.
import type { BookFields, VersionedBook } from '../books/book.js';
import type { BookQuery } from '../books/book-query.js';
import type { BatchOperation, BatchOutcome, BookChange, BookPage, ChangeFeedState, FoundBooks, BookStore, DeleteOutcome, KeyClaim, KeyedRequest, KeyedWrite, UpdateOutcome, WriteOptions } from './book-store.js';
import { BookStoreLayer } from './book-store-layer.js';
import { StoreUnavailableError, rethrowStoreError, type StoreErrorKind } from './errors.js';
import { CONFLICTS, retrier, type Retrier } from './retry.js';

export class RetryingBookStore extends BookStoreLayer {
  private readonly conflicts: Retrier;

  constructor(inner: BookStore, classify: (error: unknown) => StoreErrorKind | undefined) {
    super(inner);
    this.conflicts = retrier(CONFLICTS, {
      classify,
      giveUp(error) {
        if (classify(error) === 'conflict') throw new StoreUnavailableError({ cause: error });
        return rethrowStoreError(error, classify);
      },
    });
  }

  override create(fields: BookFields, idempotency?: KeyedWrite<VersionedBook>): Promise<VersionedBook> {
    return this.conflicts.run(() => this.inner.create(fields, idempotency));
  }

  override listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.conflicts.run(() => this.inner.listPageJson(afterId, limit));
  }

  override findBooks(query: BookQuery): Promise<FoundBooks> {
    return this.conflicts.run(() => this.inner.findBooks(query));
  }

  override get(id: bigint): Promise<VersionedBook | undefined> {
    return this.conflicts.run(() => this.inner.get(id));
  }

  // A conditional write run again checks its condition again (a Galera conflict: another
  // node's write of the same book won, so If-Match now fails where it held before).
  override update(id: bigint, changes: Partial<BookFields>, options?: WriteOptions<UpdateOutcome>): Promise<UpdateOutcome> {
    return this.conflicts.run(() => this.inner.update(id, changes, options));
  }

  // A batch run again applies all of it again, from its first operation (it was rolled back whole).
  override applyBatch(operations: readonly BatchOperation[], idempotency?: KeyedWrite<BatchOutcome>): Promise<BatchOutcome> {
    return this.conflicts.run(() => this.inner.applyBatch(operations, idempotency));
  }

  override delete(id: bigint, options?: WriteOptions<DeleteOutcome>): Promise<DeleteOutcome> {
    return this.conflicts.run(() => this.inner.delete(id, options));
  }

  // Two nodes claiming one key at once: one commits, the other's conflict is retried and then
  // sees the key claimed.
  override claimKey(request: KeyedRequest): Promise<KeyClaim> {
    return this.conflicts.run(() => this.inner.claimKey(request));
  }

  override releaseKey(request: KeyedRequest): Promise<void> {
    return this.conflicts.run(() => this.inner.releaseKey(request));
  }

  override purgeExpiredKeys(): Promise<number> {
    return this.conflicts.run(() => this.inner.purgeExpiredKeys());
  }

  // Two sequencer passes on two Galera nodes at once: one commits, the other is run again.
  override changeFeedState(): Promise<ChangeFeedState> {
    return this.conflicts.run(() => this.inner.changeFeedState());
  }

  override changesAfter(position: bigint, limit: number): Promise<BookChange[]> {
    return this.conflicts.run(() => this.inner.changesAfter(position, limit));
  }

  override pruneChanges(retentionMs: number): Promise<number> {
    return this.conflicts.run(() => this.inner.pruneChanges(retentionMs));
  }

  override ping(): Promise<void> {
    return this.conflicts.run(() => this.inner.ping());
  }
}
