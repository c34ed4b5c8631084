// GET /book/:id (docs/api.md "GET /book/:id", "Authentication", "Ids"): an existing id → the
// book, an id no book has → 404 "Book not found", authentication checked first, and an `:id`
// that is not a positive decimal integer within the id range → 404 "Book not found", after
// authentication, never 5xx.
import { beforeAll, describe, expect, it } from 'vitest';
import { type Book, INVALID_IDS } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

forEachStore((kind) => {
  describe('GET /book/:id', () => {
    const service = useService(kind);
    let token: string;
    let book: Book;
    let other: Book;
    beforeAll(async () => {
      token = await service.client.token();
      book = await service.client.createBook(token, { title: 'Kindred', author: 'Octavia E. Butler', year: 1979 });
      other = await service.client.createBook(token, { title: 'Dhalgren', author: 'Samuel R. Delany', year: 1975 });
    });

    /** `auth`: the token to send (default: a valid one), or null for no Authorization header. */
    async function read(path: string, auth: string | null = token): Promise<ApiResponse> {
      return service.client.request('GET', `/book/${path}`, auth === null ? {} : { token: auth });
    }

    it('an existing id → 200 "Book retrieved successfully", data = the book', async () => {
      const response = await read(String(book.id));
      expectEnvelope(response, 200, 'Book retrieved successfully', book);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('each id returns its own book', async () => {
      expectEnvelope(await read(String(other.id)), 200, 'Book retrieved successfully', other);
      expectEnvelope(await read(String(book.id)), 200, 'Book retrieved successfully', book);
    });

    it('the returned book has exactly id, title, author, year', async () => {
      const response = await read(String(book.id));
      expect(Object.keys(response.body.data as object).sort()).toEqual(['author', 'id', 'title', 'year']);
      expect(Number.isInteger((response.body.data as Book).id)).toBe(true);
    });

    it('query parameters are not defined and are ignored', async () => {
      expectEnvelope(await read(`${book.id}?id=${other.id}&fields=title`), 200, 'Book retrieved successfully', book);
    });

    it('an id that no book has → 404 "Book not found"', async () => {
      expectEnvelope(await read(String(Math.max(book.id, other.id) + 1000)), 404, 'Book not found', null);
    });

    it('the largest 64-bit id 2^63-1 (valid, no such book) → 404 "Book not found"', async () => {
      expectEnvelope(await read('9223372036854775807'), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)('invalid id (%s) → 404 "Book not found"', async (_name, makeId) => {
      expectEnvelope(await read(makeId(book.id)), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)(
      'authentication before the id check: invalid id (%s) without a token → 401 "Authorization token required"',
      async (_name, makeId) => {
        expectEnvelope(await read(makeId(book.id), null), 401, 'Authorization token required', null);
      },
    );

    it.each(INVALID_IDS)('authentication before the id check: invalid id (%s) with a malformed token → 401 "Invalid token"', async (_name, makeId) => {
      expectEnvelope(await read(makeId(book.id), 'garbage'), 401, 'Invalid token', null);
    });

    it('authentication before 404: a missing id without a token → 401 "Authorization token required", not 404', async () => {
      expectEnvelope(await read(String(Math.max(book.id, other.id) + 1000), null), 401, 'Authorization token required', null);
    });

    it('an existing id without a token → 401 "Authorization token required", no book leaked', async () => {
      expectEnvelope(await read(String(book.id), null), 401, 'Authorization token required', null);
    });

    it('an existing id with an empty Authorization header → 401 "Authorization token required"', async () => {
      expectEnvelope(await read(String(book.id), ''), 401, 'Authorization token required', null);
    });

    it('an existing id with a malformed token → 401 "Invalid token"', async () => {
      expectEnvelope(await read(String(book.id), 'not-a-jwt'), 401, 'Invalid token', null);
    });
  });
});
