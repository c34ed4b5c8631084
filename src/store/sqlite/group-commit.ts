// Group commit for SQLite: writes that arrive together share one transaction, so one fsync
// (synchronous=FULL) makes a whole batch durable. Each write is acknowledged only after the
// commit that contains it; if that commit fails, every write in the batch fails. A write that
// fails on its own is refused alone: it runs in a savepoint, which is rolled back, and the
// rest of the batch commits.
//
// better-sqlite3 is synchronous, so a batch runs from BEGIN to COMMIT without yielding to the
// event loop: no read on the same connection can ever see a write that is not committed yet.
import type { Database } from 'better-sqlite3';

/** The part of a better-sqlite3 Database that group commit needs. */
export type TransactionalDatabase = Pick<Database, 'transaction' | 'inTransaction'>;

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Upper bound on one batch, so one transaction never holds the writer for long. */
const MAX_BATCH = 256;

/** Thrown inside a batch when SQLite has ended the whole transaction itself. */
class BatchAborted extends Error {
  constructor(
    readonly failedIndex: number,
    readonly failure: unknown,
  ) {
    super('transaction ended by SQLite');
  }
}

export class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private readonly runBatch: (batch: Pending[]) => Outcome[];

  /**
   * `busy`: while it answers a promise, the connection is taken by a transaction of its own
   * (see sqlite/index.ts), and the next batch waits for that promise.
   */
  constructor(
    private readonly database: TransactionalDatabase,
    private readonly busy: () => Promise<unknown> | undefined = () => undefined,
  ) {
    // Called inside a transaction, a better-sqlite3 transaction function is a savepoint.
    const inSavepoint = database.transaction((write: () => unknown) => write());
    this.runBatch = database.transaction((batch: Pending[]) =>
      batch.map((pending, index): Outcome => {
        try {
          return { ok: true, value: inSavepoint(pending.write) };
        } catch (error) {
          // Some errors (disk full, I/O) make SQLite roll back the whole transaction: the writes
          // after this one would then commit on their own. Abandon the batch instead.
          if (!database.inTransaction) throw new BatchAborted(index, error);
          return { ok: false, error };
        }
      }),
    );
  }

  /** Writes waiting for the next batch (shown in the metrics as the single connection's queue). */
  get waiting(): number {
    return this.queue.length;
  }

  /** Runs `write` (synchronous SQL on the same database) in the next batch; resolves after its commit. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        // After the I/O phase: every request read in this turn of the event loop joins the batch.
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const busy = this.busy();
    if (busy) {
      void busy.then(() => this.flush());
      return;
    }
    const batch = this.queue.splice(0, MAX_BATCH);
    let outcomes: Outcome[] | undefined;
    try {
      outcomes = this.runBatch(batch);
    } catch (error) {
      if (error instanceof BatchAborted) {
        // Nothing of the batch is stored. The write that failed is refused; the others run again.
        batch[error.failedIndex]!.reject(error.failure);
        this.queue.unshift(...batch.filter((_pending, index) => index !== error.failedIndex));
      } else {
        // The commit itself failed: nothing in this batch is durable, so nothing is acknowledged.
        for (const pending of batch) pending.reject(error);
      }
    }
    if (outcomes) {
      batch.forEach((pending, index) => {
        const outcome = outcomes[index]!;
        if (outcome.ok) pending.resolve(outcome.value);
        else pending.reject(outcome.error);
      });
    }
    if (this.queue.length > 0) setImmediate(() => this.flush());
    else this.scheduled = false;
  }
}
