// Creates the books table. Ids are 64-bit and never reused after a delete, so a deleted
// book's id keeps answering 404; the database module says how (BooksTableDdl). The other
// columns are the fields of src/books/book.ts; test/stores/book-definition.test.ts checks the
// table against it. A later change to a book is a new migration, not an edit of this one.
import type { Kysely, Migration } from 'kysely';
import { BOOK_TEXT_MAX_LENGTH } from '../../books/book.js';
import type { BooksTableDdl } from '../driver.js';

const TEXT = `varchar(${BOOK_TEXT_MAX_LENGTH})` as const;

export function createBooks({ idColumn, tableOptions }: BooksTableDdl): Migration {
  return {
    async up(db: Kysely<unknown>) {
      let table = db.schema
        .createTable('books')
        // A first attempt that created the table but lost its connection before the migration
        // was recorded must not block the next (the lease keeps attempts one at a time).
        .ifNotExists()
        .addColumn('id', idColumn.type, idColumn.build)
        .addColumn('title', TEXT, (col) => col.notNull())
        .addColumn('author', TEXT, (col) => col.notNull())
        .addColumn('year', 'integer', (col) => col.notNull());
      if (tableOptions) table = table.modifyEnd(tableOptions);
      await table.execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('books').execute();
    },
  };
}
