// The case Idempotency-Key exists for (issue 22): the server commits a write, but its answer never
// reaches the client (the client hung up: a timeout, a crash, a dropped connection). The client
// retries with the same key and gets the stored answer: the book it created (its id, not a second
// book), or the 200 of the DELETE that went through (not a 404). The lost request goes over a
// bare socket that is closed without reading a byte of the answer; the retry over fetch().
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { booksTitled, describeAnswer, isReplayed, requestBytes } from '../helpers/client/idempotency.js';
import { portOf } from '../helpers/client/raw-http.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** How long the server may take to commit the abandoned request, and a 409 to clear. */
const SETTLE_MS = 10_000;

/**
 * Sends `bytes` on a connection of its own and never reads the answer. The connection is
 * destroyed once `committed()` holds (the write is in the store), or, without it, as soon as the
 * bytes are handed to the kernel.
 */
async function sendAndHangUp(baseUrl: string, bytes: Buffer, committed?: () => Promise<boolean>): Promise<void> {
  const socket = connect(portOf(baseUrl), '127.0.0.1');
  // The server's answer to a connection already gone may come back as a reset: expected here.
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  await new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  try {
    if (committed !== undefined) {
      for (const started = Date.now(); !(await committed()); await sleep(20)) {
        if (Date.now() - started > SETTLE_MS) throw new Error(`the abandoned request was not committed within ${SETTLE_MS} ms`);
      }
    }
  } finally {
    socket.destroy();
  }
}

/** Sends again while the answer is 409 (the first still being processed), a little later each time. */
async function retryWhileInProgress(send: () => Promise<ApiResponse>): Promise<ApiResponse> {
  let answer = await send();
  for (const started = Date.now(); answer.status === 409 && Date.now() - started < SETTLE_MS; ) {
    await sleep(100);
    answer = await send();
  }
  return answer;
}

forEachStore((kind) => {
  describe('an answer lost after the commit, the request retried with its key', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    const keyed = (method: string, path: string, key: string, body?: object) =>
      service.client.request(method, path, { token, body, headers: { 'idempotency-key': key } });

    it('POST: the client hangs up once the book is stored, never reading the 201; the retry → 201 with that book, replayed; one book', async () => {
      const key = `lost-${randomUUID()}`;
      const body = { title: `Lost answer ${key}`, author: 'Nobody Listening', year: 1999 };
      const bytes = requestBytes('POST', '/book', { token, keyBytes: Buffer.from(key), body: JSON.stringify(body) });
      await sendAndHangUp(service.current.baseUrl, bytes, async () => (await booksTitled(service.client, token, body.title)).length > 0);
      const [stored] = await booksTitled(service.client, token, body.title);

      const retry = await retryWhileInProgress(() => keyed('POST', '/book', key, body));
      expectEnvelope(retry, 201, 'Book created successfully', stored);
      expect(isReplayed(retry), describeAnswer(retry)).toBe(true);
      expect(await booksTitled(service.client, token, body.title)).toEqual([stored]);
    });

    it('POST: the connection closed right after the request was sent; the retry (after any 409) → 201, and one book, the one it answered', async () => {
      const key = `cut-${randomUUID()}`;
      const body = { title: `Cut off ${key}`, author: 'Nobody Listening', year: 2000 };
      await sendAndHangUp(service.current.baseUrl, requestBytes('POST', '/book', { token, keyBytes: Buffer.from(key), body: JSON.stringify(body) }));

      const retry = await retryWhileInProgress(() => keyed('POST', '/book', key, body));
      expect(retry.status, describeAnswer(retry)).toBe(201);
      // Whatever the abandoned request was still doing has had time to finish.
      await sleep(500);
      expect(await booksTitled(service.client, token, body.title)).toEqual([retry.body.data as Book]);
      // The abandoned request and the retry are one request: a further repeat replays the same answer.
      const again = await keyed('POST', '/book', key, body);
      expect(again.text).toBe(retry.text);
      expect(isReplayed(again), describeAnswer(again)).toBe(true);
    });

    it('DELETE: the client hangs up once the book is gone, never reading the 200; the retry → the stored 200, not 404', async () => {
      const book = await service.client.createBook(token, { title: 'Delete me once', author: 'Nobody Listening', year: 2001 });
      const key = `lost-delete-${randomUUID()}`;
      await sendAndHangUp(
        service.current.baseUrl,
        requestBytes('DELETE', `/book/${book.id}`, { token, keyBytes: Buffer.from(key) }),
        async () => (await service.client.request('GET', `/book/${book.id}`, { token })).status === 404,
      );
      const retry = await retryWhileInProgress(() => keyed('DELETE', `/book/${book.id}`, key));
      expectEnvelope(retry, 200, 'Book deleted successfully', null);
      expect(isReplayed(retry), describeAnswer(retry)).toBe(true);
    });
  });
});
