// The change log's triggers on SQLite (src/store/change-log.ts): each write of a book records its
// change in book_feed, in the write's own transaction, at the next rowid (its position). SQLite
// runs one write transaction at a time (across processes too), so positions taken this way are
// in commit order: nothing is left for a sequencer to do.
import { sql, type RawBuilder } from 'kysely';
import type { ChangeTriggers } from '../driver.js';

const NOW_MS = 'cast((julianday(\'now\') - 2440587.5) * 86400000 as integer)';

function recording(kind: 'created' | 'updated' | 'deleted', row: 'new' | 'old'): RawBuilder<unknown> {
  const fields = kind === 'deleted' ? 'null, null, null' : 'new.title, new.author, new.year';
  return sql.raw(`begin
    insert into book_feed (book_id, kind, version, title, author, year, at_ms)
      values (${row}.id, '${kind}', ${row}.version, ${fields}, ${NOW_MS});
  end`);
}

const TRIGGERS = {
  book_changes_created: sql`after insert on books ${recording('created', 'new')}`,
  book_changes_updated: sql`after update on books ${recording('updated', 'new')}`,
  book_changes_deleted: sql`after delete on books ${recording('deleted', 'old')}`,
};

export const sqliteChanges: ChangeTriggers = {
  positionedBy: 'trigger',
  async create(db) {
    for (const [name, body] of Object.entries(TRIGGERS)) await sql`create trigger if not exists ${sql.raw(name)} ${body}`.execute(db);
  },
  async drop(db) {
    for (const name of Object.keys(TRIGGERS)) await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
  },
};
