// PUT /book/:id (docs/api.md "PUT /book/:id", "Validation", "Authentication", "Ids"): full and
// partial updates (any subset of the fields, absent fields keep their values, `{}` is a no-op,
// `id` in the body never changes the id), unreadable bodies → 400, missing and invalid ids →
// 404, and the order of checks: authentication, then existence 404, then body 400.
import { beforeAll, describe, expect, it } from 'vitest';
import { type Book, INVALID_IDS } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

const json = (value: unknown) => JSON.stringify(value);

/** Bodies that cannot be applied onto a book (docs/api.md "Validation"), sent as raw text. */
const INVALID_BODIES: Array<[string, string]> = [
  ['an empty title ""', json({ title: '' })],
  ['an empty author ""', json({ author: '' })],
  ['a whitespace-only title "   "', json({ title: '   ' })],
  ['a whitespace-only author "\\t\\n \\r"', json({ author: '\t\n \r' })],
  ['a 501-character title', json({ title: 'x'.repeat(501) })],
  ['a 501-character author', json({ author: 'x'.repeat(501) })],
  ['year as a string "1999"', json({ year: '1999' })],
  ['year 1999.5', json({ year: 1999.5 })],
  ['year null', json({ year: null })],
  ['year -10000', json({ year: -10000 })],
  ['year 10000', json({ year: 10000 })],
  ['year true', json({ year: true })],
  ['year as an array [1999]', json({ year: [1999] })],
  ['title null', json({ title: null })],
  ['author null', json({ author: null })],
  ['title as a number', json({ title: 42 })],
  ['title as an array ["x"]', json({ title: ['x'] })],
  ['author as an object', json({ author: { name: 'x' } })],
  ['a NUL character in the title', json({ title: 'Before\u0000After' })],
  ['a valid title and author with an invalid year (nothing applied)', json({ title: 'Changed', author: 'Changed', year: '2001' })],
  ['a valid year with an empty title (nothing applied)', json({ title: '', year: 2001 })],
  ['a JSON array of fields', json([{ title: 'Changed' }])],
  ['an empty JSON array', '[]'],
  ['a JSON string', '"Changed"'],
  ['a JSON number', '42'],
  ['JSON null', 'null'],
  ['JSON true', 'true'],
  ['malformed JSON (truncated)', '{"title":"Changed"'],
  ['malformed JSON (unquoted keys)', '{title:"Changed"}'],
  ['malformed JSON (trailing comma)', '{"title":"Changed",}'],
  ['a form-encoded body', 'title=Changed'],
  ['an empty body', ''],
];

forEachStore((kind) => {
  describe('PUT /book/:id', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    const newBook = (title = 'Solaris') => service.client.createBook(token, { title, author: 'Stanisław Lem', year: 1961 });

    /** `auth`: the token to send (default: a valid one), or null for no Authorization header. */
    async function put(id: number | string, body: unknown, auth: string | null = token): Promise<ApiResponse> {
      const headers = typeof body === 'string' ? { 'content-type': 'application/json' } : undefined;
      return service.client.request('PUT', `/book/${id}`, { body, headers, ...(auth === null ? {} : { token: auth }) });
    }

    async function expectStored(book: Book) {
      expectEnvelope(await service.client.request('GET', `/book/${book.id}`, { token }), 200, 'Book retrieved successfully', book);
    }

    async function missingId(): Promise<number> {
      const response = await service.client.request('GET', '/books', { token });
      const ids = (response.body.data as Book[]).map((book) => book.id);
      return Math.max(0, ...ids) + 1000;
    }

    it('a full update → 200 "Book updated successfully", data = the updated book, saved', async () => {
      const book = await newBook();
      const changes = { title: 'The Invincible', author: 'S. Lem', year: 1964 };
      const response = await put(book.id, changes);
      expectEnvelope(response, 200, 'Book updated successfully', { id: book.id, ...changes });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      await expectStored({ id: book.id, ...changes });
    });

    it.each<[string, Partial<Book>]>([
      ['only title', { title: 'Fiasco' }],
      ['only author', { author: 'Lem, Stanisław' }],
      ['only year', { year: 1986 }],
      ['title and year', { title: 'Eden', year: 1959 }],
      ['author and year', { author: 'Another', year: -44 }],
    ])('a partial update with %s keeps the absent fields', async (_name, changes) => {
      const book = await newBook();
      const expected = { ...book, ...changes };
      expectEnvelope(await put(book.id, changes), 200, 'Book updated successfully', expected);
      await expectStored(expected);
    });

    it('successive partial updates accumulate', async () => {
      const book = await newBook();
      expect((await put(book.id, { title: 'Step 1' })).status).toBe(200);
      expect((await put(book.id, { author: 'Step 2' })).status).toBe(200);
      expectEnvelope(await put(book.id, { year: 2002 }), 200, 'Book updated successfully', {
        id: book.id,
        title: 'Step 1',
        author: 'Step 2',
        year: 2002,
      });
      await expectStored({ id: book.id, title: 'Step 1', author: 'Step 2', year: 2002 });
    });

    it('{} is a valid no-op update → 200 "Book updated successfully", book unchanged', async () => {
      const book = await newBook();
      expectEnvelope(await put(book.id, {}), 200, 'Book updated successfully', book);
      await expectStored(book);
    });

    it('setting fields to their current values → 200, book unchanged', async () => {
      const book = await newBook();
      const { id: _id, ...fields } = book;
      expectEnvelope(await put(book.id, fields), 200, 'Book updated successfully', book);
      await expectStored(book);
    });

    it('id in the body (a free id) never changes the id; the other fields are applied', async () => {
      const book = await newBook();
      const freeId = (await missingId()) + 1;
      const response = await put(book.id, { id: freeId, title: 'Renamed' });
      expectEnvelope(response, 200, 'Book updated successfully', { ...book, title: 'Renamed' });
      await expectStored({ ...book, title: 'Renamed' });
      expectEnvelope(await service.client.request('GET', `/book/${freeId}`, { token }), 404, 'Book not found', null);
    });

    it('id in the body (another existing book) never changes the id; the other book is untouched', async () => {
      const book = await newBook('Target');
      const other = await newBook('Bystander');
      const response = await put(book.id, { id: other.id, year: 1999 });
      expectEnvelope(response, 200, 'Book updated successfully', { ...book, year: 1999 });
      await expectStored({ ...book, year: 1999 });
      await expectStored(other);
    });

    it.each<[string, unknown]>([
      ['a string "abc"', 'abc'],
      ['null', null],
      ['-1', -1],
    ])('id %s alone in the body is ignored → 200 no-op', async (_name, id) => {
      const book = await newBook();
      expectEnvelope(await put(book.id, { id }), 200, 'Book updated successfully', book);
      await expectStored(book);
    });

    it('unknown fields are ignored: not stored or echoed', async () => {
      const book = await newBook();
      const response = await put(book.id, { title: 'His Master’s Voice', isbn: '123', extra: { nested: [1] } });
      expectEnvelope(response, 200, 'Book updated successfully', { ...book, title: 'His Master’s Voice' });
      await expectStored({ ...book, title: 'His Master’s Voice' });
    });

    it.each<[string, Partial<Book>]>([
      ['year -9999', { year: -9999 }],
      ['year 9999', { year: 9999 }],
      ['year 0', { year: 0 }],
      ['a 500-character title', { title: 't'.repeat(500) }],
      ['a 500-character author', { author: 'a'.repeat(500) }],
      ['a 1-character title', { title: 'T' }],
      ['a 500-emoji title (500 characters)', { title: '📖'.repeat(500) }],
    ])('boundary value accepted: %s → 200, stored exactly', async (_name, changes) => {
      const book = await newBook();
      expectEnvelope(await put(book.id, changes), 200, 'Book updated successfully', { ...book, ...changes });
      await expectStored({ ...book, ...changes });
    });

    it.each<[string, string]>([
      ['CJK and emoji', '三体 📚🐉 👩‍👩‍👧‍👦'],
      ['a combining accent (not normalized)', 'Cafe\u0301'],
      ['leading/trailing white space', '  spaced out  '],
      ['quotes and backslashes', `"q" 'q' \\ /`],
    ])('a %s title round-trips exactly through an update', async (_name, title) => {
      const book = await newBook();
      expectEnvelope(await put(book.id, { title }), 200, 'Book updated successfully', { ...book, title });
      await expectStored({ ...book, title });
    });

    it('updating one book leaves the others unchanged', async () => {
      const book = await newBook('Changed one');
      const other = await newBook('Untouched one');
      expect((await put(book.id, { title: 'New', author: 'New', year: 1 })).status).toBe(200);
      await expectStored(other);
    });

    it('a body without a Content-Type header is still parsed as JSON → 200', async () => {
      const book = await newBook();
      // A Uint8Array body makes fetch send no Content-Type at all.
      const response = await fetch(`${service.current.baseUrl}/book/${book.id}`, {
        method: 'PUT',
        headers: { authorization: token },
        body: new TextEncoder().encode(JSON.stringify({ year: 1970 })),
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 200, message: 'Book updated successfully', data: { ...book, year: 1970 } });
      await expectStored({ ...book, year: 1970 });
    });

    it.each(INVALID_BODIES)('%s on an existing book → 400 "Invalid input", stored book unchanged', async (_name, body) => {
      const book = await newBook();
      expectEnvelope(await put(book.id, body), 400, 'Invalid input', null);
      await expectStored(book);
    });

    it('no body and no Content-Type at all → 400 "Invalid input", stored book unchanged', async () => {
      const book = await newBook();
      const response = await service.client.request('PUT', `/book/${book.id}`, { token });
      expectEnvelope(response, 400, 'Invalid input', null);
      await expectStored(book);
    });

    it('a valid body for an id that no book has → 404 "Book not found", nothing created', async () => {
      const id = await missingId();
      const before = (await service.client.request('GET', '/books', { token })).body.data;
      expectEnvelope(await put(id, { title: 'Ghost', author: 'Nobody', year: 2000 }), 404, 'Book not found', null);
      expectEnvelope(await service.client.request('GET', `/book/${id}`, { token }), 404, 'Book not found', null);
      expect((await service.client.request('GET', '/books', { token })).body.data).toEqual(before);
    });

    it('{} for an id that no book has → 404 "Book not found"', async () => {
      expectEnvelope(await put(await missingId(), {}), 404, 'Book not found', null);
    });

    it.each(INVALID_BODIES)('%s for an id that no book has → 404 (existence is checked before the body)', async (_name, body) => {
      expectEnvelope(await put(await missingId(), body), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)('invalid id (%s) with a valid body → 404 "Book not found", no book changed', async (_name, makeId) => {
      const book = await newBook();
      expectEnvelope(await put(makeId(book.id), { title: 'Changed' }), 404, 'Book not found', null);
      await expectStored(book);
    });

    it.each(INVALID_IDS)('the id before the body: invalid id (%s) with an invalid body → 404 "Book not found"', async (_name, makeId) => {
      const book = await newBook();
      expectEnvelope(await put(makeId(book.id), '{"title":'), 404, 'Book not found', null);
      await expectStored(book);
    });

    it.each(INVALID_IDS)(
      'authentication before the id check: invalid id (%s) without a token → 401 "Authorization token required"',
      async (_name, makeId) => {
        const book = await newBook();
        expectEnvelope(await put(makeId(book.id), { title: 'Changed' }, null), 401, 'Authorization token required', null);
        await expectStored(book);
      },
    );

    it('an existing book without a token → 401 "Authorization token required", unchanged', async () => {
      const book = await newBook();
      expectEnvelope(await put(book.id, { title: 'Hijacked' }, null), 401, 'Authorization token required', null);
      await expectStored(book);
    });

    it('an existing book with an empty Authorization header → 401 "Authorization token required", unchanged', async () => {
      const book = await newBook();
      expectEnvelope(await put(book.id, { title: 'Hijacked' }, ''), 401, 'Authorization token required', null);
      await expectStored(book);
    });

    it('an existing book with a malformed token → 401 "Invalid token", unchanged', async () => {
      const book = await newBook();
      expectEnvelope(await put(book.id, { title: 'Hijacked' }, 'not-a-jwt'), 401, 'Invalid token', null);
      await expectStored(book);
    });

    it('authentication before 404: a missing id without a token → 401 "Authorization token required"', async () => {
      expectEnvelope(await put(await missingId(), { title: 'Ghost' }, null), 401, 'Authorization token required', null);
    });

    it('authentication before 404: a missing id with a malformed token → 401 "Invalid token"', async () => {
      expectEnvelope(await put(await missingId(), { title: 'Ghost' }, 'not-a-jwt'), 401, 'Invalid token', null);
    });

    it('authentication before 400: an invalid body on an existing book without a token → 401, unchanged', async () => {
      const book = await newBook();
      expectEnvelope(await put(book.id, '{"title":', null), 401, 'Authorization token required', null);
      await expectStored(book);
    });
  });
});
