// GET /books (docs/api.md "GET /books", "Authentication"): every stored book, ordered by id
// ascending, [] when there are none; parameters other than limit, cursor, sort and q (their own
// tests: list-pages.test.ts) are ignored.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

const byId = (a: Book, b: Book) => a.id - b.id;

const QUERY_STRINGS = [
  '?order=desc',
  '?orderBy=title',
  '?offset=1',
  '?page=2&page_size=1&per_page=1',
  '?title=Zebra&author=Nobody&year=1',
  '?id=1',
  '?search=anything&filter[year]=2000',
  '?Limit=1&SORT=-id&Q=x&Cursor=y',
  '?_limit=1&_page=2&_sort=title',
  '?',
];

forEachStore((kind) => {
  describe('GET /books on an empty store', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    it('no books → 200 "Books retrieved successfully" with data = []', async () => {
      const response = await service.client.request('GET', '/books', { token });
      expectEnvelope(response, 200, 'Books retrieved successfully', []);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it.each(QUERY_STRINGS)('parameters it does not define: %s is ignored → still data = []', async (query) => {
      const response = await service.client.request('GET', `/books${query}`, { token });
      expectEnvelope(response, 200, 'Books retrieved successfully', []);
    });

    it('no token on an empty store → 401 "Authorization token required"', async () => {
      const response = await service.client.request('GET', '/books');
      expectEnvelope(response, 401, 'Authorization token required', null);
    });
  });

  describe('GET /books', () => {
    const service = useService(kind);
    let token: string;
    /** What the store should hold, kept in step with every write below. */
    const expected = new Map<number, Book>();
    beforeAll(async () => {
      token = await service.client.token();
      // Titles, authors and years all run against id order, so any other ordering shows.
      const books = [
        { title: 'Zebra Stripes', author: 'Zoe Zimmer', year: 2020 },
        { title: 'Middlemarch', author: 'George Eliot', year: 1871 },
        { title: 'Beowulf', author: 'Anonymous', year: 1000 },
        { title: 'Aardvark Tales', author: 'Aaron Abbot', year: -500 },
        { title: '1984', author: 'George Orwell', year: 1949 },
      ];
      for (const book of books) {
        const created = await service.client.createBook(token, book);
        expected.set(created.id, created);
      }
    });

    async function list(query = ''): Promise<ApiResponse> {
      return service.client.request('GET', `/books${query}`, { token });
    }

    it('every stored book, exactly as stored, ordered by id ascending', async () => {
      const response = await list();
      expectEnvelope(response, 200, 'Books retrieved successfully', [...expected.values()].sort(byId));
      const ids = (response.body.data as Book[]).map((book) => book.id);
      expect(ids).toEqual([...ids].sort((a, b) => a - b));
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('each listed book is the same as GET /book/:id returns', async () => {
      const books = (await list()).body.data as Book[];
      for (const book of books) {
        const response = await service.client.request('GET', `/book/${book.id}`, { token });
        expectEnvelope(response, 200, 'Book retrieved successfully', book);
      }
    });

    it('still ordered by id ascending after updates, deletes and new creates', async () => {
      const ids = [...expected.keys()].sort((a, b) => a - b);
      const [first, second, third] = ids as [number, number, number];

      // Updating rows (PostgreSQL moves updated tuples to the end of the heap) must not move them in the list.
      for (const id of [first, third]) {
        const response = await service.client.request('PUT', `/book/${id}`, {
          token,
          body: { title: `Updated ${id}`, year: 1 },
        });
        expect(response.status).toBe(200);
        expected.set(id, response.body.data as Book);
      }
      const deleted = await service.client.request('DELETE', `/book/${second}`, { token });
      expect(deleted.status).toBe(200);
      expected.delete(second);
      const created = await service.client.createBook(token, { title: 'AAA First Alphabetically', author: 'A', year: -9999 });
      expected.set(created.id, created);

      expectEnvelope(await list(), 200, 'Books retrieved successfully', [...expected.values()].sort(byId));
    });

    it.each(QUERY_STRINGS)('parameters it does not define: %s is ignored → the same full list', async (query) => {
      const plain = await list();
      expectEnvelope(plain, 200, 'Books retrieved successfully', [...expected.values()].sort(byId));
      expectEnvelope(await list(query), 200, 'Books retrieved successfully', plain.body.data);
    });

    it('a book created afterwards appears in the list, last (highest id)', async () => {
      const created = await service.client.createBook(token, { title: 'Newest', author: 'Late Comer', year: 2025 });
      expected.set(created.id, created);
      const response = await list();
      expectEnvelope(response, 200, 'Books retrieved successfully', [...expected.values()].sort(byId));
      expect((response.body.data as Book[]).at(-1)).toEqual(created);
    });

    it('no Authorization header → 401 "Authorization token required", no books leaked', async () => {
      const response = await service.client.request('GET', '/books');
      expectEnvelope(response, 401, 'Authorization token required', null);
    });

    it('an empty Authorization header → 401 "Authorization token required"', async () => {
      const response = await service.client.request('GET', '/books', { token: '' });
      expectEnvelope(response, 401, 'Authorization token required', null);
    });

    it('a malformed token → 401 "Invalid token"', async () => {
      const response = await service.client.request('GET', '/books', { token: 'not.a.jwt' });
      expectEnvelope(response, 401, 'Invalid token', null);
    });

    it('a token with a tampered signature → 401 "Invalid token"', async () => {
      const [header, payload, signature] = token.split('.') as [string, string, string];
      const flipped = `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
      const response = await service.client.request('GET', '/books', { token: `${header}.${payload}.${flipped}` });
      expectEnvelope(response, 401, 'Invalid token', null);
    });

    it('query parameters do not bypass authentication', async () => {
      const response = await service.client.request('GET', '/books?token=x&authorization=y');
      expectEnvelope(response, 401, 'Authorization token required', null);
    });
  });
});
