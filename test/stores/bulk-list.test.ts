// GET /books on PostgreSQL and MySQL past its first page, where the speed path bulk-lists reads
// the rest in chunks of CHUNK_ROWS books and writes the JSON from the database's wire bytes
// (src/fast/bulk-lists/: COPY's text, MySQL's text rows): the answer must be, byte for byte,
// what bookJson() makes of the rows, whatever the text holds (every escape COPY writes, every
// control character, quotes, backslashes, non-ASCII, the longest texts) and wherever a chunk
// ends; and a chunk the store refuses must cut the answer, never end it as if complete. With
// FAST_PATHS=off (or without bulk-lists) the same checks hold for the plain pages.
import { request } from 'node:http';
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { bookJson, type StoredBook } from '../../src/books/book.js';
import { CHUNK_ROWS } from '../../src/fast/bulk-lists/index.js';
import { LIST_PREFIX } from '../../src/http/book-list.js';
import { useService } from '../helpers/service/start-service.js';
import type { StoreKind } from '../helpers/stores/dialects.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { execInTestStore, type TestStore } from '../helpers/stores/test-store.js';

/** Texts that COPY escapes or JSON escapes, or that are long or not ASCII. */
const AWKWARD_TEXTS = [
  'plain title',
  'a "quoted" word',
  'back\\slash and \\N and \\t as text',
  'tab\there, new\nline, return\rhere',
  'backspace \b, form feed \f, vertical tab \v',
  String.fromCharCode(...Array.from({ length: 31 }, (_, i) => i + 1)),
  'ends with a backslash \\',
  'é ü ß 日本語 ελληνικά',
  'emoji 😀 and line separators \u2028\u2029',
  'del \x7f and nbsp \xa0',
  '"'.repeat(500),
  '\\'.repeat(500),
  'ü'.repeat(500),
  'x',
];

const BOOKS = 2 * CHUNK_ROWS + 1_237;
const INSERTS_PER_STATEMENT = 1_000;

/** Equal texts; when they differ, the failure shows 80 characters either side of the first difference, not megabytes. */
function expectSameText(actual: string, expected: string): void {
  let at = 0;
  while (at < actual.length && actual[at] === expected[at]) at += 1;
  const around = (text: string) => `at ${at} of ${text.length}: …${text.slice(Math.max(0, at - 80), at + 80)}…`;
  expect(around(actual)).toBe(around(expected));
}

/** Runs `work` on a connection of the test store's own database. */
async function withStore<T>(testStore: TestStore, work: (query: (sql: string, values?: unknown[]) => Promise<unknown[]>) => Promise<T>): Promise<T> {
  if (testStore.kind === 'postgres') {
    const client = new pg.Client({ connectionString: testStore.url });
    await client.connect();
    try {
      return await work(async (sql, values) => (await client.query(sql, values)).rows);
    } finally {
      await client.end();
    }
  }
  const connection = await createConnection({ uri: testStore.directUrl ?? testStore.url, charset: 'utf8mb4' });
  try {
    return await work(async (sql, values) => (await connection.query(sql, values))[0] as unknown[]);
  } finally {
    await connection.end();
  }
}

forEachStore(
  (kind: StoreKind) => {
    describe(`GET /books over ${BOOKS.toLocaleString('en-US')} books (chunks of ${CHUNK_ROWS.toLocaleString('en-US')})`, () => {
      const service = useService(kind);

      /** The list as the store holds it, written by bookJson(): what GET /books must answer. */
      function expectedBody(): Promise<string> {
        const idText = kind === 'postgres' ? 'id::text' : 'cast(id as char)';
        return withStore(service.current.testStore, async (query) => {
          const rows = (await query(`select ${idText} as id_text, title, author, year from books order by id`)) as Array<Omit<StoredBook, 'id'> & { id_text: string }>;
          return `${LIST_PREFIX}${rows.map(({ id_text, ...book }) => bookJson({ ...book, id: BigInt(id_text) })).join(',')}]}`;
        });
      }

      it('answers exactly the JSON bookJson() writes of every row, awkward texts included, across chunk ends', async () => {
        // Every awkward text as title and as author, at every place of a chunk, and gaps in the ids.
        await withStore(service.current.testStore, async (query) => {
          for (let from = 0; from < BOOKS + 300; from += INSERTS_PER_STATEMENT) {
            const rows = Array.from({ length: Math.min(INSERTS_PER_STATEMENT, BOOKS + 300 - from) }, (_, k) => from + k);
            const values = rows.flatMap((i) => [AWKWARD_TEXTS[i % AWKWARD_TEXTS.length]!, AWKWARD_TEXTS[Math.floor(i / AWKWARD_TEXTS.length) % AWKWARD_TEXTS.length]!, (i % 19999) - 9999]);
            const placeholders = rows.map((_, k) => (kind === 'postgres' ? `($${3 * k + 1}, $${3 * k + 2}, $${3 * k + 3})` : '(?, ?, ?)')).join(', ');
            await query(`insert into books (title, author, year) values ${placeholders}`, values);
          }
          await query('delete from books where mod(id, 997) = 0');
          const [kept] = (await query(`select max(id) as last from (select id from books order by id limit ${BOOKS}) as kept`)) as Array<{ last: string | number }>;
          await query(`delete from books where id > ${BigInt(kept!.last)}`);
        });
        const token = await service.client.token();
        const response = await fetch(`${service.current.baseUrl}/books`, { headers: { authorization: `Bearer ${token}` } });
        expect(response.status).toBe(200);
        const body = await response.text();
        expect(JSON.parse(body).data).toHaveLength(BOOKS);
        expectSameText(body, await expectedBody());
      });

      it('a chunk the store refuses cuts the answer (no closing "]}"), and the next list is whole again', async () => {
        const token = await service.client.token();
        const { port } = new URL(service.current.baseUrl);
        const received: Buffer[] = [];
        const ended = await new Promise<boolean>((resolve) => {
          const req = request({ host: '127.0.0.1', port, path: '/books', headers: { authorization: `Bearer ${token}` } }, (res) => {
            res.once('data', (first: Buffer) => {
              received.push(first);
              // The first piece is in; the rest is read from a table that is gone until the answer ends.
              res.pause();
              void execInTestStore(service.current.testStore, 'alter table books rename to books_away').then(() => {
                res.on('data', (more: Buffer) => received.push(more));
                res.resume();
              });
            });
            res.on('end', () => resolve(true));
            res.on('error', () => resolve(false));
            res.on('aborted', () => resolve(false));
          });
          req.on('error', () => resolve(false));
          req.end();
        });
        await execInTestStore(service.current.testStore, 'alter table books_away rename to books');
        const text = Buffer.concat(received).toString();
        const whole = await expectedBody();
        expect(text.startsWith(LIST_PREFIX)).toBe(true);
        expect(ended && text.endsWith(']}')).toBe(false);
        expect(text.length).toBeLessThan(whole.length);

        const again = await fetch(`${service.current.baseUrl}/books`, { headers: { authorization: `Bearer ${token}` } });
        expectSameText(await again.text(), whole);
      });
    });
  },
  ['postgres', 'mysql'],
);
