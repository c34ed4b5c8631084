// GET /books requests that arrive together share one serialized answer (the speed path src/fast/shared-lists.ts):
// the list is serialized once for all of them (book_list_answers_serialized_total counts it),
// each still gets the whole answer, byte for byte the same; a list asked for again later is
// serialized again (nothing cached), so it shows the writes acknowledged before it.
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { LIST_PAGE_SIZE } from '../../src/routes/books.js';
import type { Book } from '../helpers/client/books.js';
import { portOf, rawExchange, requestBytes, type RawExchange } from '../helpers/client/raw-http.js';
import { fastPaths } from '../helpers/node-http.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** Requests sent at once: fewer than a turn's batch (src/fast/answer-in-turns.ts), so they are answered in one turn. */
const TOGETHER = 16;

forEachStore((kind) => {
  describe('GET /books asked for together: one serialized answer', () => {
    const service = useService(kind);

    /** book_list_answers_serialized_total as /metrics says it now. */
    async function serialized(): Promise<number> {
      const text = await (await fetch(`${service.current.baseUrl}/metrics`)).text();
      const match = /^book_list_answers_serialized_total (\d+)$/m.exec(text);
      if (!match) throw new Error('no book_list_answers_serialized_total in /metrics');
      return Number(match[1]);
    }

    /**
     * `count` GET /books on connections opened first, their requests then written in one go,
     * so the service reads them in one turn of its event loop.
     */
    async function listTogether(token: string, count: number): Promise<RawExchange[]> {
      const bytes = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token]] });
      let connected = 0;
      let go!: () => void;
      const allConnected = new Promise<void>((resolve) => (go = resolve));
      let sendAll!: () => void;
      const sending = new Promise<void>((resolve) => (sendAll = resolve));
      const exchanges = Array.from({ length: count }, () =>
        rawExchange(
          portOf(service.current.baseUrl),
          async (socket) => {
            if (++connected === count) go();
            await sending;
            socket.write(bytes);
          },
          { timeoutMs: 20_000 },
        ),
      );
      await allConnected;
      await sleep(100); // every connection accepted by the service, in turns of its own
      // The first batch after connections were accepted is a small one (turns.ts); one request
      // answered now makes the next batch a full one.
      expect((await fetch(`${service.current.baseUrl}/healthz`)).status).toBe(200);
      sendAll();
      return Promise.all(exchanges);
    }

    function expectSameWholeList(exchanges: RawExchange[], books: Book[]) {
      const first = exchanges[0]!.response!;
      expect(first.status).toBe(200);
      expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(JSON.parse(first.body)).toEqual({ status: 200, message: 'Books retrieved successfully', data: books });
      for (const { response } of exchanges) {
        expect(response?.status).toBe(200);
        expect(response?.body).toBe(first.body);
        expect(response?.headers['content-length']).toBe(first.headers['content-length']);
        expect(response?.headers['transfer-encoding']).toBe(first.headers['transfer-encoding']);
      }
      return first;
    }

    async function allBooks(token: string): Promise<Book[]> {
      return (await service.client.request('GET', '/books', { token })).body.data as Book[];
    }

    // Tests of the speed path shared-lists, which needs answer-in-turns too: the sharing happens
    // because a turn's requests are answered together; without it each request is answered
    // inside its own read callback. Skipped when FAST_PATHS turns either off.
    const sharing = fastPaths.has('shared-lists') && fastPaths.has('answer-in-turns');
    // Skipped without shared-lists or answer-in-turns (see above): then each request serializes its own.
    it.runIf(sharing)(`${TOGETHER} requests at once, a short list: serialized once, the same bytes for each`, async () => {
      const token = await service.client.token();
      for (let i = 0; i < 5; i += 1) await service.client.createBook(token, { title: `Shared ${i}`, author: 'A', year: i });
      const books = await allBooks(token);

      const before = await serialized();
      const first = expectSameWholeList(await listTogether(token, TOGETHER), books);
      expect(await serialized()).toBe(before + 1);
      expect(first.headers['content-length']).toBe(String(Buffer.byteLength(first.body)));

      // Asked for again, one at a time: serialized each time, and a write acknowledged in
      // between is in the next answer.
      const created = await service.client.createBook(token, { title: 'Written between', author: 'B', year: 2000 });
      expect(await allBooks(token)).toEqual([...books, created]);
      expect(await allBooks(token)).toEqual([...books, created]);
      expect(await serialized()).toBe(before + 3);
    });

    // Skipped without shared-lists or answer-in-turns, as above.
    it.runIf(sharing)(`${TOGETHER} requests at once, a list longer than a store page: streamed to each from one serialized copy`, async () => {
      const token = await service.client.token();
      const have = (await allBooks(token)).length;
      for (let i = have; i < LIST_PAGE_SIZE * 2 + 11; i += 1) {
        await service.current.store.create({ title: `Long ${i} "q" é`, author: `Author ${i}`, year: i % 3000 });
      }
      const books = await allBooks(token);
      expect(books).toHaveLength(LIST_PAGE_SIZE * 2 + 11);

      const before = await serialized();
      const first = expectSameWholeList(await listTogether(token, TOGETHER), books);
      expect(first.headers['transfer-encoding']).toBe('chunked');
      expect(await serialized()).toBe(before + 1);
    });

    it('whether or not they are answered together, each request gets the whole list', async () => {
      const token = await service.client.token();
      const books = await allBooks(token);
      const before = await serialized();
      expectSameWholeList(await listTogether(token, TOGETHER), books);
      const after = await serialized();
      expect(after - before).toBeGreaterThanOrEqual(1);
      expect(after - before).toBeLessThanOrEqual(TOGETHER);
    });
  });
});
