// Speed path `group-commit`: SQLite's writes that arrive together share one transaction, so
// one fsync (synchronous=FULL) makes a whole batch durable. Each write is acknowledged only
// after the commit that contains it; if that commit fails, every write in the batch fails. A
// write that fails on its own is refused alone: it runs in a savepoint, which is rolled back,
// and the rest of the batch commits. A create with an Idempotency-Key is one such write: its
// book and its answer commit together with the rest of the batch, or neither does.
//
// better-sqlite3 is synchronous, so a batch runs from BEGIN to COMMIT without yielding to the
// event loop: no read on the same connection can ever see a write that is not committed yet.
//
// Why: a commit's fsync is most of a write's time; shared, it is paid once per batch. Keyed
// creates joined the batch later (docs/benchmarks-changes.md, the table's "Idempotency-Key and
// conditional requests" row): SQLite keyed `POST /book` 2,344–2,804 → 8,686–13,160 req/s,
// pinned, against 15,670–22,274 for plain `POST /book` in the same runs.
//
// Stands in for: the plain SQLite module's writes, each its own statement and so its own commit
// and fsync (src/store/sqlite/index.ts), and its keyed creates, each a transaction of its own
// (src/store/book-repository.ts). Plugs into FastPaths.groupCommit (src/seams.ts): for each store
// opened, the writer the SQLite module runs its writes with (DriverOptions.sqliteWriter) and the
// layer around the repository that makes a keyed create one of those writes.
import type { CompiledQuery, QueryResult } from 'kysely';
import type { BookFields, VersionedBook } from '../books/book.js';
import { KeyTakenOverError, type BookStore, type KeyedWrite } from '../store/book-store.js';
import { BookStoreLayer } from '../store/book-store-layer.js';
import { bind, toVersionedBook, type VersionedBookRow } from '../store/books-table.js';
import type { BookStoreDriver } from '../store/driver.js';
import type { StoreLayer } from '../store/open-store.js';
import { insertBookQuery } from '../store/returning.js';
import type { SqliteWriter, SqliteWriterConnection, TransactionalDatabase } from '../store/sqlite/writer.js';

export type { TransactionalDatabase };

/**
 * Group commit for one store being opened: its writer, made when the SQLite module opens (for
 * another database it is never asked for), and the layer of its keyed creates.
 */
export function groupCommit(): StoreLayer {
  let writer: GroupCommitWriter | undefined;
  return {
    sqliteWriter: (connection, busy) => (writer = new GroupCommitWriter(connection, busy)),
    around: async (store, driver) => (writer ? new KeyedCreatesInGroupCommit(store, driver, writer) : store),
  };
}

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
   * (see src/store/sqlite/index.ts), and the next batch waits for that promise.
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

/** SQLite's writes, each one a write of the group commit. */
class GroupCommitWriter implements SqliteWriter {
  private readonly commits: GroupCommit;
  /** Synchronous SQL to run right after a write, in its savepoint (a keyed create's answer), by the write's query. */
  private readonly followUps = new WeakMap<CompiledQuery, (result: QueryResult<unknown>) => void>();

  constructor(
    readonly connection: SqliteWriterConnection,
    busy: () => Promise<unknown> | undefined,
  ) {
    this.commits = new GroupCommit(connection.database, busy);
  }

  get waiting(): number {
    return this.commits.waiting;
  }

  write<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    return this.commits.run(() => {
      const result = this.connection.execute(query);
      // Throwing rolls the savepoint back: the write too.
      this.followUps.get(query)?.(result);
      return result;
    });
  }

  /** Runs `then` right after `query` is written (this very object, given to `write`), in the same savepoint. */
  followWith(query: CompiledQuery, then: (result: QueryResult<unknown>) => void): void {
    this.followUps.set(query, then);
  }
}

/**
 * A create with an Idempotency-Key as one write of the group commit: the book inserted, then its
 * answer stored with its key in the same savepoint, so both commit with the batch or neither
 * does. The INSERT goes through the driver's `runWrite` (so it is traced as every write is:
 * `INSERT books`), which on this store is the writer's `write`; the answer follows it there.
 */
class KeyedCreatesInGroupCommit extends BookStoreLayer {
  private readonly insert: CompiledQuery<VersionedBookRow>;

  constructor(
    inner: BookStore,
    private readonly driver: BookStoreDriver,
    private readonly writer: GroupCommitWriter,
  ) {
    super(inner);
    this.insert = insertBookQuery(driver.db);
  }

  override async create(fields: BookFields, idempotency?: KeyedWrite<VersionedBook>): Promise<VersionedBook> {
    if (!idempotency) return this.inner.create(fields);
    const { request, answer } = idempotency;
    const query = bind(this.insert, [fields.title, fields.author, fields.year]);
    let book: VersionedBook | undefined;
    this.writer.followWith(query, (result) => {
      book = toVersionedBook(result.rows[0] as VersionedBookRow);
      const stored = this.writer.connection.execute(this.driver.idempotencyKeys.storeAnswerQuery(request, answer(book)!));
      if ((stored.numAffectedRows ?? 0n) === 0n) throw new KeyTakenOverError();
    });
    await this.driver.runWrite(query);
    // Set by the follow-up, which ran unless the write failed (then runWrite rejected).
    if (book === undefined) throw new Error('a keyed create was written outside the group commit');
    return book;
  }
}
