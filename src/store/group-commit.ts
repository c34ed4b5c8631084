// Group commit for SQLite: writes that arrive together share one transaction, so one fsync
// (synchronous=FULL) makes a whole batch durable. Each write is acknowledged only after the
// commit that contains it; if that commit fails, every write in the batch fails. A write that
// fails on its own is refused alone: the batch is rolled back and the others run again.
import type { Kysely, Transaction } from 'kysely';

type Write<DB, T> = (trx: Transaction<DB>) => Promise<T>;

interface Pending<DB> {
  write: Write<DB, unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Upper bound on one batch, so one transaction never holds the writer for long. */
const MAX_BATCH = 256;

export class GroupCommit<DB> {
  private queue: Pending<DB>[] = [];
  private scheduled = false;

  constructor(private readonly db: Kysely<DB>) {}

  run<T>(write: Write<DB, T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O phase: every request read in this turn of the event loop joins the batch.
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, MAX_BATCH);
    const values: unknown[] = [];
    let failed: { index: number; error: unknown } | undefined;
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const [index, { write }] of batch.entries()) {
          try {
            values.push(await write(trx));
          } catch (error) {
            // Roll the whole batch back: after some errors SQLite has already ended the
            // transaction, and the writes after it would commit on their own.
            failed = { index, error };
            throw error;
          }
        }
      });
      batch.forEach((pending, index) => pending.resolve(values[index]));
    } catch (error) {
      if (failed) {
        // Only the failing write is refused; the others were rolled back too and run again.
        batch[failed.index]!.reject(failed.error);
        this.queue.unshift(...batch.filter((_pending, index) => index !== failed!.index));
      } else {
        // The commit itself failed: nothing in this batch is durable, so nothing is acknowledged.
        for (const pending of batch) pending.reject(error);
      }
    }
    if (this.queue.length > 0) setImmediate(() => void this.flush());
    else this.scheduled = false;
  }
}
