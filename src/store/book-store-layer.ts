// A layer around a BookStore (batched-book-store.ts, retrying-book-store.ts): each layer
// overrides the operations it changes; what it does not change goes on to the store inside.
import type { BookFields, StoredBook } from '../books/book.js';
import type { BookPage, BookStore, NodeUse, PoolStats } from './book-store.js';

export abstract class BookStoreLayer implements BookStore {
  constructor(protected readonly inner: BookStore) {}

  create(fields: BookFields): Promise<StoredBook> {
    return this.inner.create(fields);
  }

  listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.inner.listPageJson(afterId, limit);
  }

  get(id: bigint): Promise<StoredBook | undefined> {
    return this.inner.get(id);
  }

  update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    return this.inner.update(id, changes);
  }

  delete(id: bigint): Promise<boolean> {
    return this.inner.delete(id);
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
