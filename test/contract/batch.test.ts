// POST /batch (docs/api.md "POST /batch"): creates, updates and deletes applied in one
// transaction, every one or none; each operation's own envelope in the answer; an operation that
// would be refused on its own fails the batch (422, which one and why) and nothing is written; a
// batch that cannot be read is a 400 and nothing is written; Idempotency-Key applies it once; the
// change feed shows its changes in order; concurrent batches on the same books never show half
// of one and lose no update.
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Book } from '../helpers/client/books.js';
import { ChangeStream } from '../helpers/client/change-stream.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

forEachStore((kind) => {
  describe('POST /batch', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    const batch = (body: unknown, headers: Record<string, string> = {}) => service.client.request('POST', '/batch', { token, body, headers });
    const create = (title: string) => service.client.createBook(token, { title, author: 'Batch', year: 2000 });
    const list = async () => (await service.client.request('GET', '/books', { token })).body.data as Book[];
    const book = (title: string) => ({ title, author: 'Batch', year: 2001 });

    it('applies creates, updates and deletes in order, each with its single request\'s envelope; If-Match honoured', async () => {
      const kept = await create('to update');
      const gone = await create('to delete');
      const answer = await batch({
        operations: [
          { method: 'POST', path: '/book', body: book('first') },
          { method: 'PUT', path: `/book/${kept.id}`, body: { year: 1999 }, headers: { 'If-Match': `"${kept.id}-1"` } },
          { method: 'DELETE', path: `/book/${gone.id}` },
          { method: 'POST', path: '/book', body: { ...book('second'), id: 5 } },
          { method: 'PUT', path: `/book/${kept.id}`, body: {} },
        ],
      });
      expect(answer.status, answer.text).toBe(200);
      expect(answer.headers.get('content-type')).toBe('application/json; charset=utf-8');
      const data = answer.body.data as Array<{ status: number; message: string; data: Book | null }>;
      expect(answer.body.message).toBe('Batch applied');
      expect(data.map(({ status, message }) => [status, message])).toEqual([
        [201, 'Book created successfully'],
        [200, 'Book updated successfully'],
        [200, 'Book deleted successfully'],
        [201, 'Book created successfully'],
        [200, 'Book updated successfully'],
      ]);
      expect(data[1]!.data).toEqual({ ...kept, year: 1999 });
      expect(data[2]!.data).toBeNull();
      expect(data[4]!.data).toEqual({ ...kept, year: 1999 });
      const first = data[0]!.data!;
      const second = data[3]!.data!;
      expect(second.id).toBeGreaterThan(first.id);
      const books = await list();
      expect(books).toContainEqual(first);
      expect(books).toContainEqual(second);
      expect(books).toContainEqual({ ...kept, year: 1999 });
      expect(books.some(({ id }) => id === gone.id)).toBe(false);
    });

    for (const [what, failing, status, message] of [
      ['no such book (PUT)', (id: number) => ({ method: 'PUT', path: `/book/${id + 1_000_000}`, body: { year: 1 } }), 404, 'Book not found'],
      ['no such book (DELETE of an id that is not one)', () => ({ method: 'DELETE', path: '/book/abc' }), 404, 'Book not found'],
      ['another version (If-Match)', (id: number) => ({ method: 'PUT', path: `/book/${id}`, body: { year: 1 }, headers: { 'If-Match': `"${id}-99"` } }), 412, 'Precondition failed: the book has changed'],
      ['an invalid book', () => ({ method: 'POST', path: '/book', body: { title: '', author: 'x', year: 1 } }), 400, 'Invalid input'],
      ['an invalid If-Match', (id: number) => ({ method: 'DELETE', path: `/book/${id}`, headers: { 'If-Match': 'no quotes' } }), 400, 'Invalid If-Match header'],
    ] as const) {
      it(`an operation in the middle that fails (${what}): 422 naming it, and nothing written, before or after it`, async () => {
        const existing = await create('untouched');
        const before = await list();
        const answer = await batch({
          operations: [
            { method: 'POST', path: '/book', body: book('never stored') },
            { method: 'PUT', path: `/book/${existing.id}`, body: { title: 'never changed' } },
            failing(existing.id),
            { method: 'DELETE', path: `/book/${existing.id}` },
          ],
        });
        expect(answer.status, answer.text).toBe(422);
        expect(answer.body).toEqual({ status: 422, message: 'Batch not applied: an operation failed, nothing was written', data: { operation: 2, status, message } });
        expect(await list()).toEqual(before);
      });
    }

    it('a batch that cannot be read is a 400 with its message, and nothing is written', async () => {
      const before = await list();
      const valid = { method: 'POST', path: '/book', body: book('never') };
      const cases: Array<[unknown, string]> = [
        ['not json at all', 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations'],
        [[valid], 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations'],
        [{ operations: [] }, 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations'],
        [{ operations: valid }, 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations'],
        [{ operations: Array.from({ length: 1001 }, () => valid) }, 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations'],
        [{ operations: [valid, 'POST /book'] }, 'Invalid batch: an operation is not {"method", "path", "body", "headers"}'],
        [{ operations: [valid, { ...valid, extra: 1 }] }, 'Invalid batch: an operation is not {"method", "path", "body", "headers"}'],
        [{ operations: [valid, { ...valid, headers: { 'Idempotency-Key': 'x' } }] }, 'Invalid batch: an operation is not {"method", "path", "body", "headers"}'],
        [{ operations: [valid, { method: 'GET', path: '/book/1' }] }, 'Invalid batch: an operation is not POST /book, PUT /book/:id or DELETE /book/:id'],
        [{ operations: [valid, { method: 'POST', path: '/books', body: book('x') }] }, 'Invalid batch: an operation is not POST /book, PUT /book/:id or DELETE /book/:id'],
        [{ operations: [valid, { method: 'PUT', path: '/book', body: {} }] }, 'Invalid batch: an operation is not POST /book, PUT /book/:id or DELETE /book/:id'],
        [{ operations: [valid, { method: 'POST', path: '/batch', body: { operations: [valid] } }] }, 'Invalid batch: a batch cannot hold a batch'],
      ];
      for (const [body, message] of cases) {
        const answer = await batch(body);
        expect(answer.status, JSON.stringify(body).slice(0, 100)).toBe(400);
        expect(answer.body).toEqual({ status: 400, message, data: null });
      }
      // Up to 4 MiB is read (1,000 of the longest books); over it, 413, as any body over its limit.
      const long = { method: 'POST', path: '/book', body: { title: 'é'.repeat(500), author: 'ü'.repeat(500), year: 1 } };
      const large = await batch({ operations: [...Array.from({ length: 999 }, () => long), { method: 'GET', path: '/book/1' }] });
      expect(large.status, large.text.slice(0, 200)).toBe(400);
      expect(large.body.message).toBe('Invalid batch: an operation is not POST /book, PUT /book/:id or DELETE /book/:id');
      const huge = await batch({ operations: [{ ...valid, body: { ...book('x'), padding: 'x'.repeat(5 * 1024 * 1024) } }] });
      expect(huge.status).toBe(413);
      expect(await list()).toEqual(before);
    });

    it('1,000 operations: 600 creates in a row (more than one statement holds), an update of one of the books there were, 399 more creates: each answer in order, each book as sent', async () => {
      const existing = await create('updated in a long batch');
      const sent = (i: number) => ({ title: `long batch ${i} ${'é'.repeat(i % 7)}`, author: `author ${i % 13}`, year: i - 500 });
      const operations = [
        ...Array.from({ length: 600 }, (_, i) => ({ method: 'POST', path: '/book', body: sent(i) })),
        { method: 'PUT', path: `/book/${existing.id}`, body: { year: 7 } },
        ...Array.from({ length: 399 }, (_, i) => ({ method: 'POST', path: '/book', body: sent(600 + i) })),
      ];
      const answer = await batch({ operations });
      expect(answer.status, answer.text.slice(0, 300)).toBe(200);
      const data = answer.body.data as Array<{ status: number; data: Book }>;
      expect(data).toHaveLength(1_000);
      const created = data.filter((_, i) => i !== 600).map(({ data: book }) => book);
      expect(created.map(({ title, author, year }) => ({ title, author, year }))).toEqual(Array.from({ length: 999 }, (_, i) => sent(i)));
      expect(created.every((book, i) => i === 0 || book.id > created[i - 1]!.id)).toBe(true);
      expect(data[600]).toEqual({ status: 200, message: 'Book updated successfully', data: { ...existing, year: 7 } });
      const stored = new Map((await list()).map((book) => [book.id, book]));
      for (const book of created) expect(stored.get(book.id)).toEqual(book);
    });

    it('concurrent batches of creates beside single creates: every book stored once, each answer the book as stored (a batch answered 503 wrote nothing)', async () => {
      const before = (await list()).length;
      const batches = Array.from({ length: 6 }, (_, b) =>
        batch({ operations: Array.from({ length: 200 }, (_, i) => ({ method: 'POST', path: '/book', body: { title: `crowd ${b}-${i}`, author: 'Crowd', year: i } })) }),
      );
      const singles = Array.from({ length: 50 }, (_, i) => create(`single ${i}`));
      const [answers, created] = await Promise.all([Promise.all(batches), Promise.all(singles)]);
      // On Galera a batch can lose certification to the writes beside it more times than the
      // service retries: a 503, and then nothing of it is written (What a 503 means).
      const applied = answers.filter(({ status }) => status === 200);
      expect(answers.every(({ status }) => status === 200 || status === 503)).toBe(true);
      expect(applied.length).toBeGreaterThan(0);
      const books = await list();
      expect(books.length).toBe(before + applied.length * 200 + created.length);
      const stored = new Map(books.map((book) => [book.id, book]));
      for (const answer of applied) {
        for (const { data } of answer.body.data as Array<{ data: Book }>) expect(stored.get(data.id)).toEqual(data);
      }
    });

    it('Idempotency-Key: a batch whose answer was cut, sent again, is applied once and answered the same', async () => {
      const key = `batch-${kind}-${Date.now()}`;
      const body = JSON.stringify({ operations: [{ method: 'POST', path: '/book', body: book('keyed one') }, { method: 'POST', path: '/book', body: book('keyed two') }] });
      const before = (await list()).length;
      // Sent, and the connection closed before the answer could be read.
      await new Promise<void>((resolve, reject) => {
        const url = new URL(service.current.baseUrl);
        const socket = connect(Number(url.port), url.hostname, () => {
          socket.end(
            `POST /batch HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${token}\r\nIdempotency-Key: ${key}\r\n` +
              `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
          );
          socket.destroy();
          resolve();
        });
        socket.on('error', reject);
      });
      let again = await batch(body, { 'idempotency-key': key, 'content-type': 'application/json' });
      for (let i = 0; i < 50 && again.status === 409; i++) {
        await pause(100);
        again = await batch(body, { 'idempotency-key': key, 'content-type': 'application/json' });
      }
      expect(again.status, again.text).toBe(200);
      const third = await batch(body, { 'idempotency-key': key, 'content-type': 'application/json' });
      expect(third.headers.get('idempotent-replayed')).toBe('true');
      expect(third.text).toBe(again.text);
      expect((await list()).length).toBe(before + 2);
    });

    it('Idempotency-Key on the largest batch: 1,000 creates of the longest books (a 4 MB answer) are applied, stored and replayed byte for byte', async () => {
      // 500 characters of four UTF-8 bytes each: the longest title and author there are.
      const longest = (i: number) => ({ title: `${i} ${'𝄞'.repeat(500 - String(i).length - 1)}`, author: '𝄢'.repeat(500), year: i });
      const body = JSON.stringify({ operations: Array.from({ length: 1_000 }, (_, i) => ({ method: 'POST', path: '/book', body: longest(i) })) });
      expect(Buffer.byteLength(body)).toBeGreaterThan(4_000_000);
      const key = `largest-batch-${kind}-${Date.now()}`;
      const before = (await list()).length;
      const first = await batch(body, { 'idempotency-key': key, 'content-type': 'application/json' });
      expect(first.status, first.text.slice(0, 300)).toBe(200);
      expect(Buffer.byteLength(first.text)).toBeGreaterThan(4_000_000);
      const again = await batch(body, { 'idempotency-key': key, 'content-type': 'application/json' });
      expect(again.status, again.text.slice(0, 300)).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.text).toBe(first.text);
      expect((await list()).length).toBe(before + 1_000);
    });

    it('the change feed shows a batch\'s changes in its order', async () => {
      const target = await create('feed target');
      const cursor = (await service.client.request('GET', '/books', { token })).headers.get('changes-cursor')!;
      const stream = await ChangeStream.follow(service.current.baseUrl, { token, after: cursor });
      try {
        const answer = await batch({
          operations: [
            { method: 'POST', path: '/book', body: book('fed one') },
            { method: 'PUT', path: `/book/${target.id}`, body: { year: 1 } },
            { method: 'DELETE', path: `/book/${target.id}` },
            { method: 'POST', path: '/book', body: book('fed two') },
          ],
        });
        expect(answer.status).toBe(200);
        await stream.untilEvents(4);
        await pause(300);
        expect(stream.events.map(({ event, data }) => [event, data.title ?? data.id])).toEqual([
          ['created', 'fed one'],
          ['updated', target.title],
          ['deleted', target.id],
          ['created', 'fed two'],
        ]);
      } finally {
        stream.close();
      }
    });

    it('concurrent batches on the same two books: every one applied (no lost update), and no reader ever sees half of one', async () => {
      const a = await create('pair a');
      const b = await create('pair b');
      let reading = true;
      const halves: string[] = [];
      const reader = (async () => {
        while (reading) {
          const [first, second] = await Promise.all([
            service.client.request('GET', `/books?limit=1000&q=pair`, { token }),
            pause(0),
          ]);
          const pair = (first.body.data as Book[]).filter(({ id }) => id === a.id || id === b.id);
          if (pair.length === 2 && pair[0]!.year !== pair[1]!.year) halves.push(JSON.stringify(pair));
          void second;
        }
      })();
      const batches = Array.from({ length: 12 }, (_, i) =>
        batch({
          operations: [
            { method: 'PUT', path: `/book/${a.id}`, body: { year: 3000 + i } },
            { method: 'PUT', path: `/book/${b.id}`, body: { year: 3000 + i } },
          ],
        }),
      );
      const answers = await Promise.all(batches);
      reading = false;
      await reader;
      expect(answers.map(({ status }) => status)).toEqual(answers.map(() => 200));
      expect(halves).toEqual([]);
      const [readA, readB] = await Promise.all([a, b].map(({ id }) => service.client.request('GET', `/book/${id}`, { token })));
      expect((readA!.body.data as Book).year).toBe((readB!.body.data as Book).year);
      // Every batch wrote both books once: version 1 + 12 on each.
      expect([readA!.headers.get('etag'), readB!.headers.get('etag')]).toEqual([`"${a.id}-13"`, `"${b.id}-13"`]);
    });
  });
});
