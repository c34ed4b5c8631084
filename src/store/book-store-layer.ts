// A layer around a BookStore (retrying-book-store.ts, key-purge.ts, and the speed paths' layers
// in src/fast/): each layer overrides the operations it changes; what it does not change goes
// on to the store inside.
import type { BookFields, VersionedBook } from '../books/book.js';
import type { BookQuery } from '../books/book-query.js';
import type {
  BatchOperation,
  BatchOutcome,
  BookChange,
  BookPage,
  ChangeFeedState,
  BookStore,
  DeleteOutcome,
  FoundBooks,
  KeyClaim,
  ListJsonPiece,
  KeyedRequest,
  KeyedWrite,
  NodeUse,
  PoolStats,
  UpdateOutcome,
  WriteOptions,
} from './book-store.js';

export abstract class BookStoreLayer implements BookStore {
  /** The inner store's, when it has one (a speed path's: BookStore.streamListJson). */
  readonly streamListJson?: (afterId: bigint) => AsyncIterable<ListJsonPiece>;

  constructor(protected readonly inner: BookStore) {
    if (inner.streamListJson) this.streamListJson = (afterId) => inner.streamListJson!(afterId);
  }

  create(fields: BookFields, idempotency?: KeyedWrite<VersionedBook>): Promise<VersionedBook> {
    return this.inner.create(fields, idempotency);
  }

  listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.inner.listPageJson(afterId, limit);
  }

  findBooks(query: BookQuery): Promise<FoundBooks> {
    return this.inner.findBooks(query);
  }

  get(id: bigint): Promise<VersionedBook | undefined> {
    return this.inner.get(id);
  }

  applyBatch(operations: readonly BatchOperation[], idempotency?: KeyedWrite<BatchOutcome>): Promise<BatchOutcome> {
    return this.inner.applyBatch(operations, idempotency);
  }

  update(id: bigint, changes: Partial<BookFields>, options?: WriteOptions<UpdateOutcome>): Promise<UpdateOutcome> {
    return this.inner.update(id, changes, options);
  }

  delete(id: bigint, options?: WriteOptions<DeleteOutcome>): Promise<DeleteOutcome> {
    return this.inner.delete(id, options);
  }

  claimKey(request: KeyedRequest): Promise<KeyClaim> {
    return this.inner.claimKey(request);
  }

  releaseKey(request: KeyedRequest): Promise<void> {
    return this.inner.releaseKey(request);
  }

  purgeExpiredKeys(): Promise<number> {
    return this.inner.purgeExpiredKeys();
  }

  changeFeedState(): Promise<ChangeFeedState> {
    return this.inner.changeFeedState();
  }

  changesAfter(position: bigint, limit: number): Promise<BookChange[]> {
    return this.inner.changesAfter(position, limit);
  }

  pruneChanges(retentionMs: number): Promise<number> {
    return this.inner.pruneChanges(retentionMs);
  }

  poolStats(): PoolStats | undefined {
    return this.inner.poolStats();
  }

  nodeUse(): NodeUse | undefined {
    return this.inner.nodeUse();
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
