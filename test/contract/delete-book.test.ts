// DELETE /book/:id (docs/api.md "DELETE /book/:id", "Authentication", "Ids"): an existing book
// is deleted; a second delete, a never-existing id and an invalid id → 404 "Book not found";
// authentication is checked before the id; ids are never reused after a delete.
import { beforeAll, describe, expect, it } from 'vitest';
import { type Book, INVALID_IDS } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

forEachStore((kind) => {
  describe('DELETE /book/:id', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    const newBook = (title = 'Roadside Picnic') =>
      service.client.createBook(token, { title, author: 'Arkady and Boris Strugatsky', year: 1972 });

    /** `auth`: the token to send (default: a valid one), or null for no Authorization header. */
    async function del(id: number | string, auth: string | null = token): Promise<ApiResponse> {
      return service.client.request('DELETE', `/book/${id}`, auth === null ? {} : { token: auth });
    }

    async function read(id: number | string): Promise<ApiResponse> {
      return service.client.request('GET', `/book/${id}`, { token });
    }

    async function listBooks(): Promise<Book[]> {
      const response = await service.client.request('GET', '/books', { token });
      expect(response.status).toBe(200);
      return response.body.data as Book[];
    }

    async function expectStored(book: Book) {
      expectEnvelope(await read(book.id), 200, 'Book retrieved successfully', book);
    }

    it('an existing book → 200 "Book deleted successfully", data null', async () => {
      const book = await newBook();
      const response = await del(book.id);
      expectEnvelope(response, 200, 'Book deleted successfully', null);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('after a delete, reading that id → 404 "Book not found"; the list no longer has it', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id), 200, 'Book deleted successfully', null);
      expectEnvelope(await read(book.id), 404, 'Book not found', null);
      expect((await listBooks()).some((listed) => listed.id === book.id)).toBe(false);
    });

    it('after a delete, updating that id → 404 "Book not found", and it stays gone', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id), 200, 'Book deleted successfully', null);
      const response = await service.client.request('PUT', `/book/${book.id}`, { token, body: { title: 'Resurrected' } });
      expectEnvelope(response, 404, 'Book not found', null);
      expectEnvelope(await read(book.id), 404, 'Book not found', null);
    });

    it('deleting one book leaves the others, in order, unchanged', async () => {
      const before = await newBook('Before');
      const victim = await newBook('Victim');
      const after = await newBook('After');
      const listBefore = await listBooks();
      expectEnvelope(await del(victim.id), 200, 'Book deleted successfully', null);
      expect(await listBooks()).toEqual(listBefore.filter((book) => book.id !== victim.id));
      await expectStored(before);
      await expectStored(after);
    });

    it('a second delete of the same id → 404 "Book not found"', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id), 200, 'Book deleted successfully', null);
      expectEnvelope(await del(book.id), 404, 'Book not found', null);
    });

    it('an id that never existed → 404 "Book not found", nothing deleted', async () => {
      await newBook();
      const before = await listBooks();
      const neverUsed = Math.max(...before.map((book) => book.id)) + 1000;
      expectEnvelope(await del(neverUsed), 404, 'Book not found', null);
      expect(await listBooks()).toEqual(before);
    });

    it('the largest 64-bit id 2^63-1 (valid, no such book) → 404 "Book not found"', async () => {
      const before = await listBooks();
      expectEnvelope(await del('9223372036854775807'), 404, 'Book not found', null);
      expect(await listBooks()).toEqual(before);
    });

    it('ids are not reused: create, delete the highest id, create again → a new, higher id', async () => {
      const first = await newBook('First incarnation');
      expect(Math.max(...(await listBooks()).map((book) => book.id))).toBe(first.id);
      expectEnvelope(await del(first.id), 200, 'Book deleted successfully', null);
      const second = await newBook('Second incarnation');
      expect(second.id).not.toBe(first.id);
      expect(second.id).toBeGreaterThan(first.id);
      expectEnvelope(await read(first.id), 404, 'Book not found', null);
      await expectStored(second);
    });

    it('ids are not reused even after the highest ids are deleted repeatedly', async () => {
      const seen = new Set<number>();
      for (let i = 0; i < 3; i++) {
        const book = await newBook(`Round ${i}`);
        expect(seen.has(book.id)).toBe(false);
        seen.add(book.id);
        expectEnvelope(await del(book.id), 200, 'Book deleted successfully', null);
      }
      for (const id of seen) expectEnvelope(await read(id), 404, 'Book not found', null);
    });

    it.each(INVALID_IDS)('invalid id (%s) → 404 "Book not found", nothing deleted', async (_name, makeId) => {
      const book = await newBook();
      const before = await listBooks();
      expectEnvelope(await del(makeId(book.id)), 404, 'Book not found', null);
      expect(await listBooks()).toEqual(before);
      await expectStored(book);
    });

    it.each(INVALID_IDS)(
      'authentication before the id check: invalid id (%s) without a token → 401 "Authorization token required"',
      async (_name, makeId) => {
        const book = await newBook();
        expectEnvelope(await del(makeId(book.id), null), 401, 'Authorization token required', null);
        await expectStored(book);
      },
    );

    it('an existing book without a token → 401 "Authorization token required", not deleted', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id, null), 401, 'Authorization token required', null);
      await expectStored(book);
    });

    it('an existing book with an empty Authorization header → 401 "Authorization token required", not deleted', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id, ''), 401, 'Authorization token required', null);
      await expectStored(book);
    });

    it('an existing book with a malformed token → 401 "Invalid token", not deleted', async () => {
      const book = await newBook();
      expectEnvelope(await del(book.id, 'not-a-jwt'), 401, 'Invalid token', null);
      await expectStored(book);
    });

    it('authentication before 404: a never-existing id without a token → 401 "Authorization token required"', async () => {
      const neverUsed = Math.max(0, ...(await listBooks()).map((book) => book.id)) + 1000;
      expectEnvelope(await del(neverUsed, null), 401, 'Authorization token required', null);
    });
  });

  describe('DELETE /book/:id on a fresh store', () => {
    const service = useService(kind);

    it('ids are not reused: the only book deleted, then a new one → a different id; the store is empty in between', async () => {
      const token = await service.client.token();
      const first = await service.client.createBook(token, { title: 'Only', author: 'One', year: 2000 });
      expectEnvelope(await service.client.request('DELETE', `/book/${first.id}`, { token }), 200, 'Book deleted successfully', null);
      expectEnvelope(await service.client.request('GET', '/books', { token }), 200, 'Books retrieved successfully', []);
      const second = await service.client.createBook(token, { title: 'Only', author: 'One', year: 2000 });
      expect(second.id).not.toBe(first.id);
      expect(second.id).toBeGreaterThan(first.id);
      expectEnvelope(await service.client.request('GET', '/books', { token }), 200, 'Books retrieved successfully', [second]);
    });
  });
});
