// Gives every book a version: 1 for the books that exist, raised by one on every write of a
// book from now on (its ETag, src/http/conditional-requests.ts). Adding a column with a
// constant default changes no row in PostgreSQL 11+, MySQL 8 and MariaDB 10.3+ (instant).
import type { Kysely, Migration } from 'kysely';

export function addBookVersions(): Migration {
  return {
    async up(db: Kysely<unknown>) {
      // A first attempt that added the column but lost its connection before the migration was
      // recorded must not block the next (MySQL has no transactional DDL, nor ADD COLUMN IF NOT EXISTS).
      const tables = await db.introspection.getTables();
      const books = tables.find((table) => table.name === 'books');
      if (books?.columns.some((column) => column.name === 'version')) return;
      await db.schema
        .alterTable('books')
        .addColumn('version', 'integer', (col) => col.notNull().defaultTo(1))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('books').dropColumn('version').execute();
    },
  };
}
