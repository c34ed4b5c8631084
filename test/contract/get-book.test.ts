// GET /book/:id: spec "GET /book/<book_id>" rules 1-2, Authentication 5, "Ordering of
// checks" (authentication first), and DESIGN.md "Requests" (`:id` that is not a positive
// decimal integer within the id range → 404 "Book not found", after authentication, never 5xx).
import { beforeAll, describe, expect, it } from 'vitest';
import { forEachStore } from '../helpers/stores.js';
import { useService, type ApiResponse } from '../helpers/service.js';

interface Book {
  id: number;
  title: string;
  author: string;
  year: number;
}

/** The whole envelope, and HTTP status == body.status (General rule 3). */
function expectEnvelope(response: ApiResponse, status: number, message: string, data: unknown) {
  expect(response.status).toBe(status);
  expect(response.body).toEqual({ status, message, data });
  expect(response.body.status).toBe(response.status);
}

/**
 * `:id` values that are not a positive decimal integer within the 64-bit id range, as path
 * segments (already URL-encoded where needed). Built around an existing id, so a lenient
 * parser (parseInt, Number, truncation to 64 bits) would find that book instead of 404.
 */
const INVALID_IDS: Array<[string, (id: number) => string]> = [
  ['non-numeric "abc"', () => 'abc'],
  ['zero', () => '0'],
  ['many zeros', () => '0000'],
  ['negative -1', () => '-1'],
  ['the negated existing id', (id) => `-${id}`],
  ['a decimal fraction (existing id + ".5")', (id) => `${id}.5`],
  ['1.5', () => '1.5'],
  ['existing id with a trailing letter', (id) => `${id}abc`],
  ['exponent notation (existing id + "e0")', (id) => `${id}e0`],
  ['hexadecimal of the existing id', (id) => `0x${id.toString(16)}`],
  ['a 30-digit number', () => '123456789012345678901234567890'],
  ['2^63 (just beyond the signed 64-bit range)', () => '9223372036854775808'],
  ['2^64 + existing id (wraps to it modulo 2^64)', (id) => (2n ** 64n + BigInt(id)).toString()],
  ['a 1000-digit number', () => '9'.repeat(1000)],
  ['a URL-encoded space before the id', (id) => `%20${id}`],
  ['an undecodable percent escape', () => '%zz'],
  ['"null"', () => 'null'],
  ['"NaN"', () => 'NaN'],
  ['"Infinity"', () => 'Infinity'],
  ['an SQL-looking id', (id) => `${id}%20OR%201%3D1`],
];

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

    it('rule 2: an existing id → 200 "Book retrieved successfully", data = the book', async () => {
      const response = await read(String(book.id));
      expectEnvelope(response, 200, 'Book retrieved successfully', book);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('rule 2: each id returns its own book', async () => {
      expectEnvelope(await read(String(other.id)), 200, 'Book retrieved successfully', other);
      expectEnvelope(await read(String(book.id)), 200, 'Book retrieved successfully', book);
    });

    it('rule 2: the returned book has exactly id, title, author, year', async () => {
      const response = await read(String(book.id));
      expect(Object.keys(response.body.data as object).sort()).toEqual(['author', 'id', 'title', 'year']);
      expect(Number.isInteger((response.body.data as Book).id)).toBe(true);
    });

    it('spec "No query parameters": query parameters are ignored', async () => {
      expectEnvelope(await read(`${book.id}?id=${other.id}&fields=title`), 200, 'Book retrieved successfully', book);
    });

    it('rule 1: an id that no book has → 404 "Book not found"', async () => {
      expectEnvelope(await read(String(Math.max(book.id, other.id) + 1000)), 404, 'Book not found', null);
    });

    it('rule 1: the largest 64-bit id 2^63-1 (valid, no such book) → 404 "Book not found"', async () => {
      expectEnvelope(await read('9223372036854775807'), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)('DESIGN: invalid id (%s) → 404 "Book not found"', async (_name, makeId) => {
      expectEnvelope(await read(makeId(book.id)), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)(
      'Ordering of checks: invalid id (%s) without a token → 401 "Authorization token required"',
      async (_name, makeId) => {
        expectEnvelope(await read(makeId(book.id), null), 401, 'Authorization token required', null);
      },
    );

    it.each(INVALID_IDS)('Ordering of checks: invalid id (%s) with a malformed token → 401 "Invalid token"', async (_name, makeId) => {
      expectEnvelope(await read(makeId(book.id), 'garbage'), 401, 'Invalid token', null);
    });

    it('Ordering of checks: a missing id without a token → 401 "Authorization token required", not 404', async () => {
      expectEnvelope(await read(String(Math.max(book.id, other.id) + 1000), null), 401, 'Authorization token required', null);
    });

    it('Authentication 5: an existing id without a token → 401 "Authorization token required", no book leaked', async () => {
      expectEnvelope(await read(String(book.id), null), 401, 'Authorization token required', null);
    });

    it('Authentication 5: an existing id with an empty Authorization header → 401 "Authorization token required"', async () => {
      expectEnvelope(await read(String(book.id), ''), 401, 'Authorization token required', null);
    });

    it('Authentication 5: an existing id with a malformed token → 401 "Invalid token"', async () => {
      expectEnvelope(await read(String(book.id), 'not-a-jwt'), 401, 'Invalid token', null);
    });
  });
});
