// The change log behind GET /books/changes (src/store/change-log.ts): a row per write of a book,
// written by the database's triggers in the write's own transaction, so a change is recorded if
// and only if its write committed, whatever path wrote it.
//  - book_feed: the changes in commit order, by position (its primary key: the feed's reads are
//    ranges of it). SQLite's triggers write here at once (the position is the next rowid: one
//    writer at a time, so commit order).
//  - book_changes (PostgreSQL, MySQL): where the triggers write, by id alone, for the sequencer
//    to move into book_feed once the writes have committed (ChangeTriggers.positionedBy). A
//    primary key and nothing else: each write pays one narrow insert.
//  - book_change_feed: one row, the feed's id, the last position given and how far changes were pruned.
//
// Books that exist before this migration have no change: the feed starts empty, and a client
// lists the books first (GET /books carries the cursor to follow from).
import { randomBytes } from 'node:crypto';
import { sql, type CreateTableBuilder, type Kysely, type Migration } from 'kysely';
import { BOOK_TEXT_MAX_LENGTH } from '../../books/book.js';
import type { BooksTableDdl } from '../driver.js';

const TEXT = `varchar(${BOOK_TEXT_MAX_LENGTH})` as const;

/** A change's columns after its key. */
function changeColumns(table: CreateTableBuilder<string, string>) {
  return table
    .addColumn('book_id', 'bigint', (col) => col.notNull())
    .addColumn('kind', 'varchar(7)', (col) => col.notNull())
    .addColumn('version', 'integer', (col) => col.notNull())
    .addColumn('title', TEXT)
    .addColumn('author', TEXT)
    .addColumn('year', 'integer')
    .addColumn('at_ms', 'bigint', (col) => col.notNull());
}

export function createBookChanges(booksTable: BooksTableDdl): Migration {
  const { idColumn, tableOptions, changes } = booksTable;
  const sequenced = changes.positionedBy === 'sequencer';
  return {
    async up(db: Kysely<unknown>) {
      // Each step at most once: MySQL has no transactional DDL, and an attempt that stopped halfway is run again.
      // SQLite: INTEGER PRIMARY KEY is the rowid, the next one is the largest plus one (the prune keeps the largest).
      let feed = changeColumns(db.schema.createTable('book_feed').ifNotExists().addColumn('position', sequenced ? 'bigint' : 'integer', (col) => col.primaryKey()));
      if (tableOptions) feed = feed.modifyEnd(tableOptions);
      await feed.execute();
      if (sequenced) {
        let staged = changeColumns(db.schema.createTable('book_changes').ifNotExists().addColumn('id', idColumn.type, idColumn.build));
        if (tableOptions) staged = staged.modifyEnd(tableOptions);
        await staged.execute();
      }
      let state = db.schema
        .createTable('book_change_feed')
        .ifNotExists()
        .addColumn('feed_id', 'varchar(32)', (col) => col.primaryKey())
        .addColumn('last_position', 'bigint', (col) => col.notNull())
        .addColumn('pruned_through', 'bigint', (col) => col.notNull());
      if (tableOptions) state = state.modifyEnd(tableOptions);
      await state.execute();
      const { rows } = await sql<{ n: number | bigint | string }>`select count(*) as n from book_change_feed`.execute(db);
      if (Number(rows[0]!.n) === 0) {
        await sql`insert into book_change_feed (feed_id, last_position, pruned_through) values (${randomBytes(8).toString('hex')}, 0, 0)`.execute(db);
      }
      await changes.create(db);
    },
    async down(db: Kysely<unknown>) {
      await changes.drop(db);
      for (const table of ['book_change_feed', 'book_changes', 'book_feed']) await db.schema.dropTable(table).ifExists().execute();
    },
  };
}
