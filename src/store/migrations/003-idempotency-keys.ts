// The Idempotency-Key table (src/store/idempotency-keys.ts): one row per key, the answer its
// first request got, and when it was claimed (by the database's clock), indexed for the purge
// of expired keys.
import type { CreateTableBuilder, Migration } from 'kysely';
import type { BooksTableDdl } from '../driver.js';
import { tableMigration } from './create-table.js';

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const CREATED_INDEX = 'idempotency_keys_created_ms';

export function createIdempotencyKeys(booksTable: BooksTableDdl): Migration {
  const { indexExists } = booksTable;
  const columns = (table: CreateTableBuilder<string>) =>
    table
      .addColumn('idempotency_key', `varchar(${IDEMPOTENCY_KEY_MAX_LENGTH})`, (col) => col.primaryKey())
      .addColumn('fingerprint', 'varchar(64)', (col) => col.notNull())
      .addColumn('owner', 'varchar(64)', (col) => col.notNull())
      .addColumn('status', 'integer')
      .addColumn('etag', 'varchar(64)')
      // A stored answer: one book's envelope, a few KB, or a batch's, up to 4 MiB (006 widens it on MySQL).
      .addColumn('body', 'text')
      .addColumn('created_ms', 'bigint', (col) => col.notNull());
  return tableMigration('idempotency_keys', booksTable, columns, async (db) => {
    // MySQL has no CREATE INDEX IF NOT EXISTS: its module says whether the index is there.
    if (indexExists) {
      if (!(await indexExists(db, 'idempotency_keys', CREATED_INDEX))) {
        await db.schema.createIndex(CREATED_INDEX).on('idempotency_keys').column('created_ms').execute();
      }
    } else {
      await db.schema.createIndex(CREATED_INDEX).ifNotExists().on('idempotency_keys').column('created_ms').execute();
    }
  });
}
