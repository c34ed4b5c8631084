// GET /books over more books than one store page: the streamed answer is the same envelope,
// complete and ordered by id (docs/api.md "GET /books").
import { describe, expect, it } from 'vitest';
import { LIST_PAGE_SIZE } from '../../src/routes/books.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { Book } from '../helpers/client/books.js';

const COUNT = LIST_PAGE_SIZE * 2 + 37;

forEachStore((kind) => {
  describe(`GET /books over ${COUNT} books (streamed in pages of ${LIST_PAGE_SIZE})`, () => {
    const service = useService(kind);

    it('returns every book, ordered by id ascending, in the usual envelope', async () => {
      for (let i = 0; i < COUNT; i++) {
        await service.current.store.create({ title: `Title ${i} "quoted" \\ é`, author: `Author ${i}`, year: (i % 4000) - 2000 });
      }
      const token = await service.client.token();
      const response = await service.client.request('GET', '/books', { token });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const { status, message, data } = response.body as { status: number; message: string; data: Book[] };
      expect(status).toBe(200);
      expect(message).toBe('Books retrieved successfully');
      expect(data).toHaveLength(COUNT);
      data.forEach((book, index) => {
        expect(book).toEqual({ id: book.id, title: `Title ${index} "quoted" \\ é`, author: `Author ${index}`, year: (index % 4000) - 2000 });
        if (index > 0) expect(book.id).toBeGreaterThan(data[index - 1]!.id);
      });
    });
  });
});
