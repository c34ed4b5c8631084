// The change log's trigger on PostgreSQL (src/store/change-log.ts): each write of a book records
// its change in the write's own transaction, without a position; the sequencer gives positions
// in commit order once the writes have committed (writers run in parallel: an order taken
// inside their transactions would not be the order in which they commit).
import { sql } from 'kysely';
import type { ChangeTriggers } from '../driver.js';

const NOW_MS = '(extract(epoch from clock_timestamp()) * 1000)::int8';

export const postgresChanges: ChangeTriggers = {
  positionedBy: 'sequencer',
  async create(db) {
    // search_path from the migration's: the function finds book_changes in the service's schema
    // whatever the session that writes has set.
    await sql
      .raw(
        `create or replace function book_changes_record() returns trigger language plpgsql
        set search_path from current as $$
        begin
          if tg_op = 'DELETE' then
            insert into book_changes (book_id, kind, version, at_ms) values (old.id, 'deleted', old.version, ${NOW_MS});
          else
            insert into book_changes (book_id, kind, version, title, author, year, at_ms)
              values (new.id, case tg_op when 'INSERT' then 'created' else 'updated' end, new.version, new.title, new.author, new.year, ${NOW_MS});
          end if;
          return null;
        end $$`,
      )
      .execute(db);
    await sql`drop trigger if exists book_changes_record on books`.execute(db);
    await sql`create trigger book_changes_record after insert or update or delete on books for each row execute function book_changes_record()`.execute(db);
  },
  async drop(db) {
    await sql`drop trigger if exists book_changes_record on books`.execute(db);
    await sql`drop function if exists book_changes_record()`.execute(db);
  },
};
