// Every store follows the one definition of a book (src/books/book.ts): the books table has
// exactly BOOK_COLUMNS, its text columns hold BOOK_TEXT_MAX_LENGTH characters, and the list
// page's JSON, whoever writes it (SQLite's json_object, PostgreSQL's row_to_json, bookJson()
// on MySQL), is exactly bookJson() of the same rows, byte for byte.
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BOOK_COLUMNS,
  BOOK_FIELDS,
  BOOK_TEXT_MAX_LENGTH,
  BOOK_YEAR_MAX,
  BOOK_YEAR_MIN,
  bookJson,
  MAX_BOOK_ID,
  type BookFields,
  type VersionedBook,
} from '../../src/books/book.js';
import type { BookStore } from '../../src/store/book-store.js';
import { openStore } from '../../src/store/open-store.js';
import { openSqlite } from '../helpers/stores/sqlite.js';
import { createTestStore, execInTestStore, testStoreSettings, type TestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** Fields whose values are text (varchar columns); the others are integers. */
const TEXT_FIELDS = BOOK_FIELDS.filter((field) => typeof ({ title: '', author: '', year: 0 } satisfies BookFields)[field] === 'string');

/** Text that JSON writers are known to differ on: escapes, control characters, non-ASCII. */
const BOOKS: BookFields[] = [
  { title: 'Dune', author: 'Frank Herbert', year: 1965 },
  { title: 'Quotes "inside" and \\ backslashes \\"', author: "O'Brien / slash", year: BOOK_YEAR_MIN },
  { title: 'Control \b\f\n\r\t \u0001\u001f\u007f end', author: 'Tab\there', year: BOOK_YEAR_MAX },
  { title: 'Ünïcödé — “typographic” ‘quotes’ and 📚 emoji', author: '漢字 かな 한글 العربية', year: 0 },
  { title: 'Line separators \u2028 \u2029 and </script><!--', author: 'HTML & <b>tags</b>', year: -1 },
  { title: 'x'.repeat(BOOK_TEXT_MAX_LENGTH), author: '€'.repeat(BOOK_TEXT_MAX_LENGTH), year: 2024 },
];

/** Ids written as exact integers beyond what a double holds. */
const LARGE_IDS = [2n ** 53n + 1n, MAX_BOOK_ID];

interface Column {
  name: string;
  /** Lower case: 'integer', 'bigint', 'varchar'. */
  type: string;
  length: number | null;
  nullable: boolean;
}

async function columnsOf(testStore: TestStore): Promise<Column[]> {
  switch (testStore.kind) {
    case 'sqlite': {
      const db = openSqlite(testStore.url.replace(/^sqlite:/, ''), { readonly: true });
      try {
        const rows = db.prepare('select name, type, "notnull" as required from pragma_table_info(\'books\') order by cid').all() as {
          name: string;
          type: string;
          required: number;
        }[];
        return rows.map(({ name, type, required }) => {
          const [, base, length] = /^(\w+)(?:\((\d+)\))?$/.exec(type.toLowerCase())!;
          return { name, type: base!, length: length === undefined ? null : Number(length), nullable: required === 0 && name !== 'id' };
        });
      } finally {
        db.close();
      }
    }
    case 'postgres': {
      const client = new pg.Client({ connectionString: testStore.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ name: string; type: string; length: number | null; nullable: string }>(
          `select column_name as name, data_type as type, character_maximum_length as length, is_nullable as nullable
           from information_schema.columns where table_schema = 'public' and table_name = 'books' order by ordinal_position`,
        );
        return rows.map((row) => ({ ...row, type: row.type === 'character varying' ? 'varchar' : row.type, nullable: row.nullable === 'YES' }));
      } finally {
        await client.end();
      }
    }
    case 'mysql': {
      const connection = await createConnection({ uri: testStore.url });
      try {
        const [rows] = await connection.query(
          `select column_name as name, data_type as type, character_maximum_length as length, is_nullable as nullable
           from information_schema.columns where table_schema = database() and table_name = 'books' order by ordinal_position`,
        );
        return (rows as { name: string; type: string; length: number | string | null; nullable: string }[]).map((row) => ({
          name: row.name,
          type: row.type.toLowerCase() === 'int' ? 'integer' : row.type.toLowerCase(),
          length: row.length === null ? null : Number(row.length),
          nullable: row.nullable === 'YES',
        }));
      } finally {
        await connection.end();
      }
    }
  }
}

forEachStore((kind) => {
  let testStore: TestStore;
  let store: BookStore;
  const stored: VersionedBook[] = [];

  beforeAll(async () => {
    testStore = await createTestStore(kind);
    store = await openStore(testStoreSettings(testStore, { timeoutMs: 10_000, poolMax: 2 }), pino({ level: 'silent' }));
    for (const fields of BOOKS) stored.push(await store.create(fields));
    for (const [i, id] of LARGE_IDS.entries()) {
      await execInTestStore(testStore, `insert into books (id, title, author, year) values (${id}, 'Large id ${i}', 'Exact', ${i})`);
      stored.push({ id, title: `Large id ${i}`, author: 'Exact', year: i, version: 1 });
    }
  });

  afterAll(async () => {
    await store?.close();
    await testStore?.drop();
  });

  it('the books table has exactly BOOK_COLUMNS, in order, then the version (src/store/migrations/002-book-versions.ts), and on MySQL the words the search index reads (004-list-indexes.ts)', async () => {
    const searchColumn = kind === 'mysql' ? ['search_words'] : [];
    expect((await columnsOf(testStore)).map((column) => column.name)).toEqual([...BOOK_COLUMNS, 'version', ...searchColumn]);
  });

  it(`the text fields (${TEXT_FIELDS.join(', ')}) are varchar(BOOK_TEXT_MAX_LENGTH); the year an integer; the id a 64-bit integer; none nullable`, async () => {
    const columns = new Map((await columnsOf(testStore)).map((column) => [column.name, column]));
    for (const field of TEXT_FIELDS) {
      expect(columns.get(field), field).toEqual({ name: field, type: 'varchar', length: BOOK_TEXT_MAX_LENGTH, nullable: false });
    }
    expect(columns.get('year')).toEqual({ name: 'year', type: 'integer', length: null, nullable: false });
    // SQLite's INTEGER PRIMARY KEY is the rowid: a signed 64-bit integer.
    expect(columns.get('id')).toMatchObject({ type: kind === 'sqlite' ? 'integer' : 'bigint', nullable: false });
  });

  it('every book reads back as it was written (get)', async () => {
    for (const book of stored) expect(await store.get(book.id)).toEqual(book);
  });

  it("the list page's JSON is exactly bookJson() of the same rows, in id order", async () => {
    const page = await store.listPageJson(0n, 100);
    expect(page.json).toBe(stored.map(bookJson).join(','));
    expect(page.count).toBe(stored.length);
    expect(page.lastId).toBe(MAX_BOOK_ID);
    // And it is JSON a client parses back into the same texts.
    const parsed = JSON.parse(`[${page.json}]`) as BookFields[];
    expect(parsed.map(({ title, author, year }) => ({ title, author, year }))).toEqual(
      stored.map(({ title, author, year }) => ({ title, author, year })),
    );
  });

  it('pages split anywhere join into the same JSON', async () => {
    const parts: string[] = [];
    let afterId = 0n;
    for (;;) {
      const page = await store.listPageJson(afterId, 3);
      if (page.count === 0) break;
      parts.push(page.json);
      afterId = page.lastId!;
    }
    expect(parts).toHaveLength(Math.ceil(stored.length / 3));
    expect(parts.join(',')).toBe(stored.map(bookJson).join(','));
    expect(await store.listPageJson(MAX_BOOK_ID, 3)).toEqual({ json: '', count: 0, lastId: undefined });
  });
});
