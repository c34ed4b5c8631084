// A migration that makes one table: CREATE TABLE IF NOT EXISTS with the columns it gives and
// the table options the database module asks for (engine, character set), then whatever else
// it needs (an index); undone by dropping the table. IF NOT EXISTS: a first attempt that created
// the table but lost its connection before the migration was recorded must not block the next
// (the lease keeps attempts one at a time).
import type { CreateTableBuilder, Kysely, Migration } from 'kysely';
import type { BooksTableDdl } from '../driver.js';

export function tableMigration(
  name: string,
  { tableOptions }: Pick<BooksTableDdl, 'tableOptions'>,
  columns: (table: CreateTableBuilder<string>) => CreateTableBuilder<string, string>,
  afterCreate: (db: Kysely<unknown>) => Promise<void> = async () => undefined,
): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let table = columns(db.schema.createTable(name).ifNotExists());
      if (tableOptions) table = table.modifyEnd(tableOptions);
      await table.execute();
      await afterCreate(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable(name).execute();
    },
  };
}
