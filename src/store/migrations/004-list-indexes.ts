// The indexes that keep every page of the list O(page) at any size (GET /books with `sort`,
// `cursor`, `q`: src/store/book-query.ts): one per sort column, on (column, id) in the order
// the queries compare it, and the search's text index, as each database makes it
// (BooksTableDdl.list). The id order needs none (the primary key).
//
// On an existing collection this reads every book: docs/operations.md ("Upgrading") says how
// long it took on 1,000,000 books, and for how long each database blocks writes meanwhile.
import { sql, type Kysely, type Migration } from 'kysely';
import type { BooksTableDdl } from '../driver.js';

const SORT_INDEXES = { books_title: 'title', books_author: 'author', books_year: 'year' } as const;

export function addListIndexes(booksTable: BooksTableDdl): Migration {
  const { list, indexExists } = booksTable;
  return {
    async up(db: Kysely<unknown>) {
      for (const [name, column] of Object.entries(SORT_INDEXES)) {
        const key = column === 'year' ? sql.ref(column) : list.textKey(column);
        // MySQL has no CREATE INDEX IF NOT EXISTS: its module says whether the index is there.
        if (indexExists && (await indexExists(db, 'books', name))) continue;
        let index = db.schema.createIndex(name).on('books').expression(sql`${key}, ${sql.ref('id')}`);
        if (!indexExists) index = index.ifNotExists();
        await index.execute();
      }
      await list.createSearchIndex(db);
    },
    async down(db: Kysely<unknown>) {
      await list.dropSearchIndex(db);
      for (const name of Object.keys(SORT_INDEXES)) {
        let drop = db.schema.dropIndex(name);
        // MySQL names the table of the index it drops.
        if (indexExists) drop = drop.on('books');
        else drop = drop.ifExists();
        await drop.execute();
      }
    },
  };
}
