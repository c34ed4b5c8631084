// The outer layer of the BookStore: each operation runs again after a conflict (CONFLICTS in
// retry.ts: the work was rolled back and may succeed when run again), and here, in one place,
// a failure becomes what the HTTP side sees: StoreUnavailableError (503) when the store cannot
// be reached or the conflicts did not stop, the error itself (500) otherwise.
import type { BookFields, StoredBook } from '../books/book.js';
import type { BookPage, BookStore } from './book-store.js';
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

  override create(fields: BookFields): Promise<StoredBook> {
    return this.conflicts.run(() => this.inner.create(fields));
  }

  override listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    return this.conflicts.run(() => this.inner.listPageJson(afterId, limit));
  }

  override get(id: bigint): Promise<StoredBook | undefined> {
    return this.conflicts.run(() => this.inner.get(id));
  }

  override update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    return this.conflicts.run(() => this.inner.update(id, changes));
  }

  override delete(id: bigint): Promise<boolean> {
    return this.conflicts.run(() => this.inner.delete(id));
  }

  override ping(): Promise<void> {
    return this.conflicts.run(() => this.inner.ping());
  }
}
