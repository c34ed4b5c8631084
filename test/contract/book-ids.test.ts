// 64-bit ids end to end (docs/api.md "Ids": ids are 64-bit, written to JSON as exact integers
// even above 2^53; an :id outside the store's range is 404, never 5xx).
// The id generator of the service's own store is moved past 2^53 and 2^62, and the JSON text
// is read for the exact digits (JSON.parse would round them).
import { beforeAll, describe, expect, it } from 'vitest';
import { execInTestStore, type TestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiResponse } from '../helpers/client/api-client.js';

const BOOK = { title: 'Big Numbers', author: 'A. Counter', year: 2024 };
const MAX_ID = 2n ** 63n - 1n; // 9223372036854775807

/** Makes the next generated id of the `books` table equal `nextId`, in the service's own database. */
async function moveIdGenerator(testStore: TestStore, nextId: bigint): Promise<void> {
  const statement = {
    // AUTOINCREMENT: the next id is max(sqlite_sequence.seq, largest rowid) + 1; sqlite_sequence
    // has no unique key on `name`, so replace its row rather than add a second one.
    sqlite: `delete from sqlite_sequence where name = 'books'; insert into sqlite_sequence(name, seq) values ('books', ${nextId - 1n})`,
    postgres: `alter table books alter column id restart with ${nextId}`,
    mysql: `alter table books auto_increment = ${nextId}`,
  }[testStore.kind];
  await execInTestStore(testStore, statement);
}

/** Every `"id":<digits>` in the JSON text, as written (a quoted id does not match). */
function idsInText(response: ApiResponse): string[] {
  return [...response.text.matchAll(/"id":(-?\d+)(?=[,}\s])/g)].map((match) => match[1] ?? '');
}

forEachStore((kind) => {
  describe('64-bit book ids', () => {
    const service = useService(kind);
    let token: string;

    beforeAll(async () => {
      token = await service.client.token();
    });

    it.each([
      ['2^53 + 1', 2n ** 53n + 1n], // 9007199254740993: the first integer a double cannot hold
      ['2^62 + 1', 2n ** 62n + 1n], // 4611686018427387905
    ])(
      'past %s, create → read → list → update → delete by that id, exact digits in the JSON',
      async (_name, nextId) => {
        const id = nextId.toString();
        await moveIdGenerator(service.current.testStore, nextId);

        const created = await service.client.request('POST', '/book', { token, body: BOOK });
        expect(created.status, created.text).toBe(201);
        expect(created.body.message).toBe('Book created successfully');
        expect(idsInText(created)).toEqual([id]);
        expect(created.body.data).toMatchObject(BOOK);

        const read = await service.client.request('GET', `/book/${id}`, { token });
        expect(read.status, read.text).toBe(200);
        expect(idsInText(read)).toEqual([id]);
        expect(read.body.data).toMatchObject(BOOK);

        // Neighbours that a rounding service would confuse with this id do not exist.
        for (const neighbour of [nextId - 1n, nextId + 1n]) {
          const other = await service.client.request('GET', `/book/${neighbour.toString()}`, { token });
          expect(other.body).toEqual({ status: 404, message: 'Book not found', data: null });
        }

        const list = await service.client.request('GET', '/books', { token });
        expect(list.status).toBe(200);
        expect(idsInText(list)).toContain(id);

        const updated = await service.client.request('PUT', `/book/${id}`, { token, body: { title: 'Bigger Numbers' } });
        expect(updated.status, updated.text).toBe(200);
        expect(updated.body.message).toBe('Book updated successfully');
        expect(idsInText(updated)).toEqual([id]);
        expect(updated.body.data).toMatchObject({ ...BOOK, title: 'Bigger Numbers' });

        const reread = await service.client.request('GET', `/book/${id}`, { token });
        expect(idsInText(reread)).toEqual([id]);
        expect(reread.body.data).toMatchObject({ ...BOOK, title: 'Bigger Numbers' });

        const deleted = await service.client.request('DELETE', `/book/${id}`, { token });
        expect(deleted.status, deleted.text).toBe(200);
        expect(deleted.body).toEqual({ status: 200, message: 'Book deleted successfully', data: null });

        const gone = await service.client.request('GET', `/book/${id}`, { token });
        expect(gone.status).toBe(404);
        expect(gone.body).toEqual({ status: 404, message: 'Book not found', data: null });
      },
    );

    it('the generator keeps counting above 2^62 (next create is id + 1)', async () => {
      const first = 2n ** 62n + 100n;
      await moveIdGenerator(service.current.testStore, first);
      const a = await service.client.request('POST', '/book', { token, body: BOOK });
      const b = await service.client.request('POST', '/book', { token, body: BOOK });
      expect(idsInText(a)).toEqual([first.toString()]);
      expect(idsInText(b)).toEqual([(first + 1n).toString()]);
      const list = await service.client.request('GET', '/books', { token });
      const ids = idsInText(list);
      // Ordered by id ascending (as GET /books always is), compared exactly as integers.
      expect(ids.map(BigInt)).toEqual([...ids.map(BigInt)].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
      expect(ids.slice(-2)).toEqual([first.toString(), (first + 1n).toString()]);
    });

    describe('ids at and beyond the 64-bit range are 404, never 5xx', () => {
      it.each(['GET', 'PUT', 'DELETE'])('%s /book/9223372036854775807 (largest id, no such book) → 404 "Book not found"', async (method) => {
        const response = await service.client.request(method, `/book/${MAX_ID.toString()}`, {
          token,
          body: method === 'PUT' ? BOOK : undefined,
        });
        expect(response.status).toBe(404);
        expect(response.body).toEqual({ status: 404, message: 'Book not found', data: null });
      });

      it.each(['9223372036854775808', '18446744073709551615', '18446744073709551616', '99999999999999999999'])(
        'GET, PUT, DELETE /book/%s (beyond 64 bits) → 404 "Book not found"',
        async (id) => {
          for (const method of ['GET', 'PUT', 'DELETE']) {
            const response = await service.client.request(method, `/book/${id}`, {
              token,
              body: method === 'PUT' ? BOOK : undefined,
            });
            expect(response.status, `${method} /book/${id}: ${response.text}`).toBe(404);
            expect(response.body).toEqual({ status: 404, message: 'Book not found', data: null });
          }
        },
      );

      it('the largest id, 9223372036854775807, can be created, read, updated and deleted', async () => {
        const id = MAX_ID.toString();
        await moveIdGenerator(service.current.testStore, MAX_ID);
        const created = await service.client.request('POST', '/book', { token, body: BOOK });
        expect(created.status, created.text).toBe(201);
        expect(idsInText(created)).toEqual([id]);
        const read = await service.client.request('GET', `/book/${id}`, { token });
        expect(idsInText(read)).toEqual([id]);
        const updated = await service.client.request('PUT', `/book/${id}`, { token, body: { year: 1 } });
        expect(updated.status, updated.text).toBe(200);
        expect(idsInText(updated)).toEqual([id]);
        expect(updated.body.data).toMatchObject({ ...BOOK, year: 1 });
        const deleted = await service.client.request('DELETE', `/book/${id}`, { token });
        expect(deleted.body).toEqual({ status: 200, message: 'Book deleted successfully', data: null });
        const gone = await service.client.request('GET', `/book/${id}`, { token });
        expect(gone.status).toBe(404);
      });
    });
  });
});
