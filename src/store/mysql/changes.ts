// The change log's triggers on MySQL and MariaDB (src/store/change-log.ts): each write of a book
// records its change in the write's own transaction, without a position; the sequencer gives
// positions in commit order once the writes have committed (writers run in parallel, and on
// Galera each node hands out its own ids). With row-based replication (Galera's), a node that
// applies another node's write receives the change row itself: the triggers fire only where the
// write was made.
import { sql, type RawBuilder } from 'kysely';
import type { ChangeTriggers } from '../driver.js';

const NOW_MS = 'cast(unix_timestamp(now(3)) * 1000 as signed)';

function recording(kind: 'created' | 'updated' | 'deleted'): RawBuilder<unknown> {
  if (kind === 'deleted') {
    return sql.raw(`insert into book_changes (book_id, kind, version, at_ms) values (old.id, 'deleted', old.version, ${NOW_MS})`);
  }
  return sql.raw(`insert into book_changes (book_id, kind, version, title, author, year, at_ms)
    values (new.id, '${kind}', new.version, new.title, new.author, new.year, ${NOW_MS})`);
}

const TRIGGERS = {
  book_changes_created: sql`after insert on books for each row ${recording('created')}`,
  book_changes_updated: sql`after update on books for each row ${recording('updated')}`,
  book_changes_deleted: sql`after delete on books for each row ${recording('deleted')}`,
};

export const mysqlChanges: ChangeTriggers = {
  positionedBy: 'sequencer',
  async create(db) {
    // MySQL before 8.0.29 has no CREATE TRIGGER IF NOT EXISTS: dropped first, if a first attempt made it.
    for (const [name, body] of Object.entries(TRIGGERS)) {
      await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
      await sql`create trigger ${sql.raw(name)} ${body}`.execute(db);
    }
  },
  async drop(db) {
    for (const name of Object.keys(TRIGGERS)) await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
  },
};
