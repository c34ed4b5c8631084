// POST /book (docs/api.md "POST /book", "Validation", "Authentication"): a valid book → 201
// with a new id; a body that cannot be read as a book → 400 "Invalid input", nothing stored;
// `id` and unknown fields in the body ignored; JSON whatever the Content-Type; the envelope;
// authentication checked before the body.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

const VALID = { title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', year: 1969 };
const json = (value: unknown) => JSON.stringify(value);

/** Bodies that cannot be read as a Book (docs/api.md "Validation"), sent as raw text. */
const INVALID_BODIES: Array<[string, string]> = [
  // missing fields
  ['an empty object {}', '{}'],
  ['a missing title', json({ author: VALID.author, year: VALID.year })],
  ['a missing author', json({ title: VALID.title, year: VALID.year })],
  ['a missing year', json({ title: VALID.title, author: VALID.author })],
  // empty and whitespace-only strings
  ['an empty title ""', json({ ...VALID, title: '' })],
  ['an empty author ""', json({ ...VALID, author: '' })],
  ['a whitespace-only title "   "', json({ ...VALID, title: '   ' })],
  ['a whitespace-only author "\\t\\n \\r"', json({ ...VALID, author: '\t\n \r' })],
  ['a title of only non-breaking/ideographic spaces', json({ ...VALID, title: '\u00a0\u3000\u2003' })],
  // length limit
  ['a 501-character title', json({ ...VALID, title: 'x'.repeat(501) })],
  ['a 501-character author', json({ ...VALID, author: 'x'.repeat(501) })],
  ['a 501-emoji title (501 characters)', json({ ...VALID, title: '📚'.repeat(501) })],
  // year type and range
  ['year as a string "1999"', json({ ...VALID, year: '1999' })],
  ['year 1999.5', json({ ...VALID, year: 1999.5 })],
  ['year null', json({ ...VALID, year: null })],
  ['year -10000', json({ ...VALID, year: -10000 })],
  ['year 10000', json({ ...VALID, year: 10000 })],
  ['year 1e999 (Infinity)', '{"title":"T","author":"A","year":1e999}'],
  ['year true', json({ ...VALID, year: true })],
  ['year as an array [1999]', json({ ...VALID, year: [1999] })],
  ['year as an object', json({ ...VALID, year: { value: 1999 } })],
  // title/author types
  ['title null', json({ ...VALID, title: null })],
  ['author null', json({ ...VALID, author: null })],
  ['title as a number', json({ ...VALID, title: 42 })],
  ['title as an array ["x"]', json({ ...VALID, title: ['x'] })],
  ['author as an array ["x"]', json({ ...VALID, author: ['x'] })],
  ['title as an object', json({ ...VALID, title: { text: 'x' } })],
  ['a NUL character in the title', json({ ...VALID, title: 'Before\u0000After' })],
  ['a NUL character in the author', json({ ...VALID, author: '\u0000' })],
  // non-object JSON
  ['a JSON array of a valid book', json([VALID])],
  ['an empty JSON array', '[]'],
  ['a JSON string', '"The Left Hand of Darkness"'],
  ['a JSON number', '42'],
  ['JSON null', 'null'],
  ['JSON true', 'true'],
  // not JSON at all
  ['malformed JSON (truncated)', '{"title":"T","author":"A","year":'],
  ['malformed JSON (unquoted keys)', '{title:"T",author:"A",year:1999}'],
  ['malformed JSON (trailing comma)', '{"title":"T","author":"A","year":1999,}'],
  ['a form-encoded body', 'title=T&author=A&year=1999'],
  ['an empty body', ''],
  ['a whitespace-only body', '  \n '],
];

forEachStore((kind) => {
  describe('POST /book', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    async function listBooks(): Promise<Book[]> {
      const response = await service.client.request('GET', '/books', { token });
      expect(response.status).toBe(200);
      return response.body.data as Book[];
    }

    async function readBook(id: number): Promise<ApiResponse> {
      return service.client.request('GET', `/book/${id}`, { token });
    }

    it('a valid book → 201 "Book created successfully", data = the stored book incl. its new id', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', { token, body: VALID });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...VALID });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const created = response.body.data as Book;
      expect(Number.isInteger(created.id)).toBe(true);
      expect(created.id).toBeGreaterThan(0);
      expect(before.some((book) => book.id === created.id)).toBe(false);

      // Stored: readable by id and listed, exactly as returned.
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', created);
      expect(await listBooks()).toEqual([...before, created]);
    });

    it('every create generates a new id, even for identical bodies', async () => {
      const first = await service.client.createBook(token, VALID);
      const second = await service.client.createBook(token, VALID);
      expect(second.id).not.toBe(first.id);
      expect(second.id).toBeGreaterThan(first.id);
      const ids = (await listBooks()).map((book) => book.id);
      expect(ids).toContain(first.id);
      expect(ids).toContain(second.id);
    });

    it.each<[string, unknown]>([
      ['a free id 424242', 424242],
      ['an id as a string "abc"', 'abc'],
      ['an id -1', -1],
      ['an id null', null],
    ])('%s in the body is ignored → 201 with a service-generated id', async (_name, id) => {
      const response = await service.client.request('POST', '/book', { token, body: { id, ...VALID } });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...VALID });
      const created = response.body.data as Book;
      expect(created.id).not.toEqual(id);
      expect(created.id).toBeGreaterThan(0);
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', created);
      if (id === 424242) {
        expectEnvelope(await readBook(424242), 404, 'Book not found', null);
      }
    });

    it('an id of an existing book in the body is ignored: a new book, the existing one untouched', async () => {
      const existing = await service.client.createBook(token, { title: 'Existing', author: 'Someone', year: 2000 });
      const response = await service.client.request('POST', '/book', { token, body: { ...VALID, id: existing.id } });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...VALID });
      expect((response.body.data as Book).id).not.toBe(existing.id);
      expectEnvelope(await readBook(existing.id), 200, 'Book retrieved successfully', existing);
    });

    it('unknown fields are ignored: 201 and not stored or echoed', async () => {
      const response = await service.client.request('POST', '/book', {
        token,
        body: { ...VALID, isbn: '978-0441478125', tags: ['sf'], extra: { nested: true }, createdAt: null },
      });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...VALID });
      const created = response.body.data as Book;
      expect(Object.keys(created).sort()).toEqual(['author', 'id', 'title', 'year']);
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', created);
    });

    it.each<[string, Omit<Book, 'id'>]>([
      ['year -9999', { ...VALID, year: -9999 }],
      ['year 9999', { ...VALID, year: 9999 }],
      ['year 0', { ...VALID, year: 0 }],
      ['a 500-character title', { ...VALID, title: 't'.repeat(500) }],
      ['a 500-character author', { ...VALID, author: 'a'.repeat(500) }],
      ['a 1-character title and author', { ...VALID, title: 'T', author: 'A' }],
      ['a 500-emoji title (500 characters)', { ...VALID, title: '📖'.repeat(500) }],
      ['a 500-character non-ASCII author', { ...VALID, author: 'é'.repeat(500) }],
    ])('boundary value accepted: %s → 201, stored exactly', async (_name, book) => {
      const response = await service.client.request('POST', '/book', { token, body: book });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...book });
      const created = response.body.data as Book;
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', created);
    });

    it.each(INVALID_BODIES)('%s → 400 "Invalid input", nothing stored', async (_name, body) => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', {
        token,
        body,
        headers: { 'content-type': 'application/json' },
      });
      expectEnvelope(response, 400, 'Invalid input', null);
      expect(await listBooks()).toEqual(before);
    });

    it('no body and no Content-Type at all → 400 "Invalid input", nothing stored', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', { token });
      expectEnvelope(response, 400, 'Invalid input', null);
      expect(await listBooks()).toEqual(before);
    });

    it.each<[string, string]>([
      ['Cyrillic', 'Война и мир'],
      ['CJK', '東京物語 — 三島由紀夫'],
      ['right-to-left Hebrew and Arabic', 'שלום עליכם · ألف ليلة وليلة'],
      ['emoji, incl. a ZWJ sequence and flags', '📚🐉✨ 👩‍👩‍👧‍👦 🇫🇷🇯🇵'],
      ['astral mathematical letters', '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 𝕿𝖎𝖙𝖑𝖊'],
      ['a combining accent (not normalized)', 'Cafe\u0301 vs Caf\u00e9'],
      ['quotes, backslashes and markup', `"Quoted" 'single' \\back\\slash <b>&amp;</b> \`tick\``],
      ['SQL-looking text', "Robert'); DROP TABLE books; --"],
      ['leading/trailing white space and inner newlines', '  Dune\n\tMessiah  '],
      ['control characters other than NUL', 'bell\u0007 escape\u001b del\u007f'],
      ['zero-width and BOM characters', 'zero\u200bwidth\ufeffbom'],
    ])('a %s title and author round-trip exactly (create, read, list)', async (_name, text) => {
      const book = { title: text, author: `${text} (author)`, year: 2024 };
      const response = await service.client.request('POST', '/book', { token, body: book });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...book });
      const created = response.body.data as Book;
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', { id: created.id, ...book });
      expect((await listBooks()).find((listed) => listed.id === created.id)).toEqual({ id: created.id, ...book });
    });

    it('a body without a Content-Type header is still parsed as JSON → 201', async () => {
      // A Uint8Array body makes fetch send no Content-Type at all.
      const response = await fetch(`${service.current.baseUrl}/book`, {
        method: 'POST',
        headers: { authorization: token },
        body: new TextEncoder().encode(JSON.stringify(VALID)),
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const body = (await response.json()) as ApiResponse['body'];
      expect(response.status).toBe(201);
      expect(body).toEqual({ status: 201, message: 'Book created successfully', data: { id: expect.any(Number), ...VALID } });
      const created = body.data as Book;
      expectEnvelope(await readBook(created.id), 200, 'Book retrieved successfully', created);
    });

    it('a body sent as text/plain is still parsed as JSON → 201', async () => {
      const response = await service.client.request('POST', '/book', {
        token,
        body: JSON.stringify(VALID),
        headers: { 'content-type': 'text/plain' },
      });
      expectEnvelope(response, 201, 'Book created successfully', { id: expect.any(Number), ...VALID });
    });

    it('a body without Content-Type that is not valid JSON → 400 "Invalid input", nothing stored', async () => {
      const before = await listBooks();
      const response = await fetch(`${service.current.baseUrl}/book`, {
        method: 'POST',
        headers: { authorization: token },
        body: new TextEncoder().encode('{"title":'),
      });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({ status: 400, message: 'Invalid input', data: null });
      expect(await listBooks()).toEqual(before);
    });

    it('no Authorization header → 401 "Authorization token required", nothing stored', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', { body: VALID });
      expectEnvelope(response, 401, 'Authorization token required', null);
      expect(await listBooks()).toEqual(before);
    });

    it('an empty Authorization header → 401 "Authorization token required", nothing stored', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', { token: '', body: VALID });
      expectEnvelope(response, 401, 'Authorization token required', null);
      expect(await listBooks()).toEqual(before);
    });

    it('a malformed token → 401 "Invalid token", nothing stored', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', { token: 'not-a-jwt', body: VALID });
      expectEnvelope(response, 401, 'Invalid token', null);
      expect(await listBooks()).toEqual(before);
    });

    it('authentication comes before the body check (no token + invalid body → 401)', async () => {
      const before = await listBooks();
      const response = await service.client.request('POST', '/book', {
        body: '{"title":',
        headers: { 'content-type': 'application/json' },
      });
      expectEnvelope(response, 401, 'Authorization token required', null);
      expect(await listBooks()).toEqual(before);
    });
  });
});
