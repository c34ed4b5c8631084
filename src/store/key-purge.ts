// Expired Idempotency-Keys deleted in the background: short statements of at most
// PURGE_BATCH rows each, one after the other, so no purge holds a lock or a connection long
// enough to be noticed by a request. Every instance purges; deleting a row twice is harmless.
import type { Logger } from 'pino';
import { BookStoreLayer } from './book-store-layer.js';
import type { BookStore } from './book-store.js';
import { describeDriverError } from './errors.js';
import { PURGE_BATCH } from './idempotency-keys.js';

/** The store, with expired keys purged every quarter of IDEMPOTENCY_TTL (at least every minute, at most every second) until it closes. */
export class KeyPurgingBookStore extends BookStoreLayer {
  private readonly timer: NodeJS.Timeout;
  private purging = false;
  private closed = false;

  constructor(inner: BookStore, ttlMs: number, private readonly logger: Logger) {
    super(inner);
    const everyMs = Math.min(60_000, Math.max(1_000, Math.round(ttlMs / 4)));
    this.timer = setInterval(() => void this.purge(), everyMs);
    this.timer.unref();
  }

  private async purge(): Promise<void> {
    if (this.purging) return;
    this.purging = true;
    try {
      while (!this.closed && (await this.inner.purgeExpiredKeys()) >= PURGE_BATCH) {
        // A full batch: more may be left; the next batch after other work has had its turn.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      // The store is down or busy: the next round tries again; expired keys are ignored meanwhile.
      this.logger.warn(describeDriverError(error), 'purging expired Idempotency-Keys failed; trying again later');
    } finally {
      this.purging = false;
    }
  }

  override close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    return this.inner.close();
  }
}
