// Creates the books table. Ids are 64-bit and never reused after a delete, so a deleted
// book's id keeps answering 404; the database module says how (BooksTableDdl). The other
// columns are the fields of src/books/book.ts; test/stores/book-definition.test.ts checks the
// table against it. A later change to a book is a new migration, not an edit of this one.
import type { Migration } from 'kysely';
import { BOOK_TEXT_MAX_LENGTH } from '../../books/book.js';
import type { BooksTableDdl } from '../driver.js';
import { tableMigration } from './create-table.js';

const TEXT = `varchar(${BOOK_TEXT_MAX_LENGTH})` as const;

export function createBooks(booksTable: BooksTableDdl): Migration {
  const { idColumn } = booksTable;
  return tableMigration('books', booksTable, (table) =>
    table
      .addColumn('id', idColumn.type, idColumn.build)
      .addColumn('title', TEXT, (col) => col.notNull())
      .addColumn('author', TEXT, (col) => col.notNull())
      .addColumn('year', 'integer', (col) => col.notNull()),
  );
}
