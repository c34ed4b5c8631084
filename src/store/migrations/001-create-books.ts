// Creates the books table. Ids are 64-bit and never reused after a delete, so a deleted
// book's id keeps answering 404 (SQLite needs AUTOINCREMENT for that).
import { sql, type Kysely, type Migration } from 'kysely';
import type { StoreDialect } from '../book-store.js';

export function createBooks(dialect: StoreDialect): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let table = db.schema.createTable('books');
      switch (dialect) {
        case 'sqlite':
          table = table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement());
          break;
        case 'postgres':
          table = table.addColumn('id', 'bigint', (col) => col.primaryKey().generatedByDefaultAsIdentity());
          break;
        case 'mysql':
          table = table.addColumn('id', 'bigint', (col) => col.primaryKey().autoIncrement());
          break;
      }
      table = table
        .addColumn('title', 'varchar(500)', (col) => col.notNull())
        .addColumn('author', 'varchar(500)', (col) => col.notNull())
        .addColumn('year', 'integer', (col) => col.notNull());
      if (dialect === 'mysql') {
        // Full Unicode whatever the server's default character set; binary collation keeps text exact.
        table = table.modifyEnd(sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`);
      }
      await table.execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('books').execute();
    },
  };
}
