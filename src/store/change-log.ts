// The change log: what GET /books/changes reads (src/changes/). Every write of a book records a
// row of book_changes in its own transaction (the database's triggers, src/store/<kind>/changes.ts),
// so a change exists if and only if its write committed. The feed hands the rows out by their
// position, which must be commit order: a reader that has everything up to position P must never
// later find a row at P or below.
//
// How positions are given (docs/api.md, "The change feed: how it orders changes"):
// - SQLite: in the write itself, from a counter in the feed's row. SQLite runs one write
//   transaction at a time (across processes too), so positions are taken in commit order.
// - PostgreSQL, MySQL, MariaDB, Galera: by the sequencer, after the writes commit. A sequencer
//   pass locks the feed's row (one pass at a time, across every instance and Galera node), finds
//   the committed rows without a position, and gives them positions above the last one given,
//   in the order of their ids. A row becomes visible only when its write commits, so a row
//   sequenced later always gets a larger position: no row appears behind a reader. Two writes of
//   one book are ordered by the book's row lock (the second inserts its change after the first
//   committed, with a larger id), so each book's changes are in their commit order.
import { sql } from 'kysely';
import type { BookChange, ChangeFeedState } from './book-store.js';
import { toBigInt } from './books-table.js';
import type { BookStoreDriver } from './driver.js';

/** Changes one sequencer pass moves at most (a bounded statement). */
const SEQUENCE_BATCH = 1_000;
/** Changes one prune deletes at most (one short statement). */
export const PRUNE_BATCH = 1_000;

export interface ChangeLog {
  /** Where the feed stands, once every change committed so far has its position. */
  state(): Promise<ChangeFeedState>;
  /** Up to `limit` changes after `position`, in position order. */
  after(position: bigint, limit: number): Promise<BookChange[]>;
  /** Deletes up to PRUNE_BATCH of the oldest changes written more than `retentionMs` ago: how many. */
  prune(retentionMs: number): Promise<number>;
}

const CHANGE_COLUMNS = ['book_id', 'kind', 'version', 'title', 'author', 'year', 'at_ms'] as const;

export function changeLog(driver: BookStoreDriver): ChangeLog {
  const { db } = driver;
  const sequenced = driver.booksTable.changes.positionedBy === 'sequencer';

  // SQLite's last position is the largest in book_feed (the prune never deletes it); the
  // sequencer's is in the feed's row, with whether changes wait for it.
  const readState = sequenced
    ? db
        .selectFrom('book_change_feed')
        .select(['feed_id', 'last_position', 'pruned_through'])
        .select((eb) => eb.exists(eb.selectFrom('book_changes').select('id')).as('waiting'))
        .compile()
    : db
        .selectFrom('book_change_feed')
        .select(['feed_id', 'pruned_through'])
        .select((eb) => eb.selectFrom('book_feed').select((inner) => inner.fn.max('position').as('last')).as('last_position'))
        .compile();

  /**
   * One sequencer pass: the committed changes waiting in book_changes (up to SEQUENCE_BATCH, in
   * id order) moved to book_feed at positions above the last one given. Whether more may be
   * waiting. READ COMMITTED: each statement sees every write committed before it (and MySQL
   * takes no gap locks that would hold up the writers).
   */
  function sequenceOnce(): Promise<boolean> {
    return db
      .transaction()
      .setIsolationLevel('read committed')
      .execute(async (trx) => {
        // The lock on the feed's row makes passes take turns; on Galera, two passes on two nodes
        // conflict at commit and one of them is rolled back (a retried conflict).
        const feed = await trx.selectFrom('book_change_feed').select('last_position').forUpdate().executeTakeFirstOrThrow();
        const waiting = await trx.selectFrom('book_changes').select('id').orderBy('id').limit(SEQUENCE_BATCH).execute();
        if (waiting.length === 0) return false;
        const ids = waiting.map((row) => toBigInt(row.id as bigint | string | number));
        // position = id + shift: the ids' order, every position above the last one given. A
        // change with an id in between whose write had not committed when they were read gets
        // its position in a later pass, above these.
        const shift = toBigInt(feed.last_position) + 1n - ids[0]!;
        await trx
          .insertInto('book_feed')
          .columns(['position', ...CHANGE_COLUMNS])
          .expression(
            trx
              .selectFrom('book_changes')
              .select([sql<bigint>`id + ${shift}`.as('position'), ...CHANGE_COLUMNS])
              .where('id', 'in', ids),
          )
          .execute();
        await trx.deleteFrom('book_changes').where('id', 'in', ids).execute();
        await trx.updateTable('book_change_feed').set({ last_position: ids.at(-1)! + shift }).execute();
        return ids.length === SEQUENCE_BATCH;
      });
  }

  const after = (position: bigint, limit: number) =>
    db
      .selectFrom('book_feed')
      .select(['position', 'kind', 'book_id', 'version', 'title', 'author', 'year'])
      .where('position', '>', position)
      .orderBy('position')
      .limit(limit)
      .compile();

  return {
    async state() {
      let row = (await driver.runRead(readState)).rows[0] as { feed_id: string; last_position: unknown; pruned_through: unknown; waiting?: unknown };
      if (sequenced && Number(row.waiting) > 0) {
        while (await sequenceOnce());
        row = (await driver.runRead(readState)).rows[0] as typeof row;
      }
      const prunedThrough = toBigInt(row.pruned_through as bigint);
      const last = row.last_position === null ? 0n : toBigInt(row.last_position as bigint);
      return { feedId: row.feed_id, last: last > prunedThrough ? last : prunedThrough, prunedThrough };
    },
    async after(position, limit) {
      const { rows } = await driver.runRead(after(position, limit));
      return rows.map((row) => {
        const id = toBigInt(row.book_id);
        const version = Number(row.version);
        const book =
          row.kind === 'deleted' ? { id, version } : { id, title: row.title!, author: row.author!, year: Number(row.year), version };
        return { position: toBigInt(row.position), kind: row.kind, book };
      });
    },
    prune(retentionMs) {
      // In position order, up to the first change that is still young, and never the last one
      // (SQLite's next position follows it): everything at or below pruned_through is gone, so
      // a cursor below it is answered 410.
      return driver.transaction(async (tx) => {
        const oldest = await tx.run(
          db
            .selectFrom('book_feed')
            .select(['position', sql<number>`case when at_ms < ${driver.nowMs} - ${retentionMs} then 1 else 0 end`.as('expired')])
            .orderBy('position')
            .limit(PRUNE_BATCH + 1)
            .compile(),
        );
        let through: bigint | undefined;
        let count = 0;
        // The batch's last row is left for the next round (and, when it is the newest, for good).
        for (const row of oldest.rows.slice(0, -1)) {
          if (Number(row.expired) !== 1) break;
          through = toBigInt(row.position);
          count += 1;
        }
        if (through === undefined) return 0;
        await tx.run(db.deleteFrom('book_feed').where('position', '<=', through).compile());
        await tx.run(db.updateTable('book_change_feed').set({ pruned_through: through }).compile());
        return count;
      });
    },
  };
}
