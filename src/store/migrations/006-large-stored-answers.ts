// A stored answer as large as a batch's: POST /batch with an Idempotency-Key stores its whole
// answer, each operation's envelope, up to about 4 MiB for 1,000 of the longest books. MySQL's
// TEXT holds 64 KiB, so there the column becomes MEDIUMTEXT (16 MiB); PostgreSQL's and SQLite's
// text have no such limit, and nothing changes. On MySQL this copies the table of keys (an
// ALTER of a column's type): it holds keys of the last IDEMPOTENCY_TTL only.
import type { Migration } from 'kysely';
import type { BooksTableDdl } from '../driver.js';

export function widenStoredAnswers({ largeTextType }: BooksTableDdl): Migration {
  return {
    async up(db) {
      if (largeTextType) await db.schema.alterTable('idempotency_keys').modifyColumn('body', largeTextType).execute();
    },
    async down(db) {
      if (largeTextType) await db.schema.alterTable('idempotency_keys').modifyColumn('body', 'text').execute();
    },
  };
}
