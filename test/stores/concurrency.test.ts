// Concurrent writes on every store: no lost, duplicated or mixed-up writes.
// 200 concurrent creates each get their own id and row; 50 concurrent full updates of one
// book leave it equal to exactly one of the submitted bodies, and each update answers with
// its own write.
import { describe, expect, it } from 'vitest';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { Book } from '../helpers/client/books.js';

const CREATES = 200;
const UPDATES = 50;

forEachStore((kind) => {
  describe('concurrent writes', () => {
    const service = useService(kind);

    it(`${CREATES} concurrent POST /book: all 201, ${CREATES} distinct ids, ${CREATES} rows listed`, async () => {
      const token = await service.client.token();
      const bodies = Array.from({ length: CREATES }, (_, i) => ({ title: `Concurrent ${i}`, author: `Writer ${i % 7}`, year: 1800 + i }));
      const responses = await Promise.all(bodies.map((body) => service.client.request('POST', '/book', { token, body })));

      const failures = responses.filter((r) => r.status !== 201).map((r) => `${r.status} ${r.text}`);
      expect(failures).toEqual([]);
      const created = responses.map((r) => r.body.data as Book);
      created.forEach((book, i) => {
        expect(responses[i]!.body.message).toBe('Book created successfully');
        expect(book).toEqual({ id: expect.any(Number), ...bodies[i] });
        expect(Number.isSafeInteger(book.id) && book.id > 0).toBe(true);
      });
      const ids = new Set(created.map((book) => book.id));
      expect(ids.size).toBe(CREATES);

      const list = await service.client.request('GET', '/books', { token });
      expect(list.status).toBe(200);
      const listed = list.body.data as Book[];
      expect(listed).toHaveLength(CREATES);
      // Every created book is listed exactly as acknowledged.
      const byId = new Map(listed.map((book) => [book.id, book]));
      for (const book of created) expect(byId.get(book.id)).toEqual(book);
      // Ordered by id ascending.
      expect(listed.map((book) => book.id)).toEqual([...ids].sort((a, b) => a - b));
    });

    it(`${UPDATES} concurrent PUTs with different bodies to one book: the record equals exactly one of them`, async () => {
      const token = await service.client.token();
      const book = await service.client.createBook(token, { title: 'Original', author: 'Nobody', year: 1 });
      const bodies = Array.from({ length: UPDATES }, (_, i) => ({ title: `Version ${i}`, author: `Editor ${i}`, year: 2000 + i }));
      const responses = await Promise.all(
        bodies.map((body) => service.client.request('PUT', `/book/${book.id}`, { token, body })),
      );

      const failures = responses.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.text}`);
      expect(failures).toEqual([]);
      // Each update answers with the book as its own write left it, never another writer's fields.
      responses.forEach((response, i) => {
        expect(response.body).toEqual({ status: 200, message: 'Book updated successfully', data: { id: book.id, ...bodies[i] } });
      });

      const read = await service.client.request('GET', `/book/${book.id}`, { token });
      expect(read.status).toBe(200);
      const stored = read.body.data as Book;
      const matches = bodies.filter((body) => body.title === stored.title && body.author === stored.author && body.year === stored.year);
      expect(matches, `stored ${JSON.stringify(stored)} is not one of the submitted bodies`).toHaveLength(1);
      expect(stored.id).toBe(book.id);
    });
  });
});
