// Request limits over bare sockets: the 1 MiB body limit (with Content-Length, announced but
// never sent, chunked, endless), the 128 KiB header limit (one big header, many headers, a
// long URL, after a first response on a keep-alive connection) and the whole-request
// deadline (REQUEST_TIMEOUT) against slow uploads, slow headers and idle connections.
// Each limit must end in the envelope or a clean close, and the service must answer the next
// request. These limits live in the HTTP layer, not the store: SQLite only.
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { machinery } from '../helpers/node-http.js';
import { portOf, rawExchange, rawRequest, requestBytes, type RawExchange } from '../helpers/client/raw-http.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiClient } from '../helpers/client/api-client.js';
import { expectEnvelopeShape } from '../helpers/client/envelope.js';

const MIB = 1024 * 1024;
/** Just over the service's header limit (src/app.ts MAX_HEADER_BYTES, 128 KiB). */
const OVER = 130 * 1024;
const TOO_LARGE = { status: 413, message: 'Request body too large', data: null };

/** A book body of exactly `bytes` bytes (the title pads it). */
function bookBodyOfLength(bytes: number): string {
  const empty = JSON.stringify({ title: '', author: 'a', year: 1 });
  return JSON.stringify({ title: 'x'.repeat(bytes - empty.length), author: 'a', year: 1 });
}

function write(socket: Socket, data: string | Buffer): Promise<void> {
  if (socket.destroyed) return Promise.reject(new Error('socket closed'));
  return socket.write(data) ? Promise.resolve() : Promise.race([once(socket, 'drain').then(() => undefined), once(socket, 'close').then(() => undefined)]);
}

/** The exchange ended in the envelope with one of `statuses`, or in a close with nothing (or only whole responses) sent. */
function expectEnvelopeOrCleanClose(exchange: RawExchange, statuses: number[], context: string) {
  expect(exchange.closed, `the server neither answered nor closed within the timeout (${context})`).toBe(true);
  if (exchange.response !== undefined) {
    const envelope = expectEnvelopeShape(exchange.response, context);
    expect(statuses, `${context}: ${exchange.response.body}`).toContain(envelope.status);
  } else {
    expect(exchange.received.toString('latin1'), `a partial response is not a clean close (${context})`).toBe('');
  }
}

async function expectStillAnswering(client: ApiClient, token: string) {
  const response = await client.request('GET', '/books', { token });
  expect(response.status).toBe(200);
  expect(response.body.message).toBe('Books retrieved successfully');
}

describe('sqlite', () => {
  describe('body size limit: 1 MiB → 413 envelope', () => {
    const service = useService('sqlite', { LOG_LEVEL: 'warn' });
    let port: number;
    let token: string;
    let bookId: number;

    beforeAll(async () => {
      port = portOf(service.current.baseUrl);
      token = await service.client.token();
      bookId = (await service.client.createBook(token, { title: 'Kept', author: 'Unchanged', year: 1999 })).id;
    });

    async function listText(): Promise<string> {
      return (await service.client.request('GET', '/books', { token })).text;
    }

    const endpoints = () => [
      { method: 'POST', path: '/book', auth: true },
      { method: 'PUT', path: `/book/${bookId}`, auth: true },
      { method: 'POST', path: '/token', auth: false },
    ];

    it('Content-Length over 1 MiB, body sent in full: 413 envelope at POST /book, PUT /book/:id, POST /token; nothing stored', async () => {
      for (const { method, path, auth } of endpoints()) {
        const before = await listText();
        const exchange = await rawRequest(port, {
          method,
          path,
          headers: [...(auth ? [['Authorization', token] as [string, string]] : []), ['Content-Type', 'application/json']],
          body: bookBodyOfLength(2 * MIB),
        });
        expect(exchange.response, `${method} ${path}: ${exchange.received.toString('latin1', 0, 200)}`).toBeDefined();
        const envelope = expectEnvelopeShape(exchange.response!, `${method} ${path}`);
        expect(envelope).toEqual(TOO_LARGE);
        expect(await listText()).toBe(before);
        await expectStillAnswering(service.client, token);
      }
    });

    it('Content-Length of 2 MiB announced but no body sent: 413 at once, without waiting for the body', async () => {
      for (const { method, path, auth } of endpoints()) {
        const exchange = await rawRequest(
          port,
          {
            method,
            path,
            headers: [...(auth ? [['Authorization', token] as [string, string]] : []), ['Content-Type', 'application/json'], ['Content-Length', String(2 * MIB)]],
          },
          { timeoutMs: 5_000 },
        );
        expect(exchange.response, `${method} ${path}: no answer within ${exchange.elapsedMs} ms`).toBeDefined();
        expect(expectEnvelopeShape(exchange.response!, `${method} ${path}`)).toEqual(TOO_LARGE);
        expect(exchange.elapsedMs).toBeLessThan(2_000);
      }
      await expectStillAnswering(service.client, token);
    });

    it('chunked (no Content-Length) body over 1 MiB: 413 envelope at POST /book, PUT /book/:id, POST /token; nothing stored', async () => {
      for (const { method, path, auth } of endpoints()) {
        const before = await listText();
        const exchange = await rawRequest(port, {
          method,
          path,
          headers: [...(auth ? [['Authorization', token] as [string, string]] : []), ['Content-Type', 'application/json']],
          body: bookBodyOfLength(2 * MIB),
          chunked: true,
        });
        expect(exchange.response, `${method} ${path}: ${exchange.received.toString('latin1', 0, 200)}`).toBeDefined();
        expect(expectEnvelopeShape(exchange.response!, `${method} ${path}`)).toEqual(TOO_LARGE);
        expect(await listText()).toBe(before);
      }
      await expectStillAnswering(service.client, token);
    });

    it('an endless chunked upload is cut off: 413 envelope after about 1 MiB, not after the client gives up', async () => {
      const chunkOf = (data: string) => Buffer.from(`${Buffer.byteLength(data).toString(16)}\r\n${data}\r\n`);
      const chunk = chunkOf('x'.repeat(64 * 1024));
      let sent = 0;
      const exchange = await rawExchange(
        port,
        async (socket) => {
          await write(socket, requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Transfer-Encoding', 'chunked']] }));
          await write(socket, chunkOf('{"author":"a","year":1,"title":"'));
          // Up to 64 MiB; the server must answer long before.
          while (!socket.destroyed && sent < 64 * MIB) {
            await write(socket, chunk);
            sent += 64 * 1024;
          }
        },
        { timeoutMs: 20_000 },
      );
      expect(exchange.response, `no answer after ${sent} bytes sent`).toBeDefined();
      expect(expectEnvelopeShape(exchange.response!, 'endless chunked upload')).toEqual(TOO_LARGE);
      expect(sent).toBeLessThan(16 * MIB);
      await expectStillAnswering(service.client, token);
    });

    it('a body of exactly 1 MiB is within the limit (reaches validation: 201), 1 MiB + 1 byte is not (413), chunked or not', async () => {
      const unpadded = JSON.stringify({ title: 'x'.repeat(400), author: 'a', year: 1, padding: '' });
      const exact = JSON.stringify({ title: 'x'.repeat(400), author: 'a', year: 1, padding: 'p'.repeat(MIB - unpadded.length) });
      expect(Buffer.byteLength(exact)).toBe(MIB);
      const over = `${exact} `;
      for (const chunked of [false, true]) {
        const ok = await rawRequest(port, { method: 'POST', path: '/book', headers: [['Authorization', token]], body: exact, chunked });
        expect(ok.response?.status, ok.response?.body).toBe(201);
        const tooLarge = await rawRequest(port, { method: 'POST', path: '/book', headers: [['Authorization', token]], body: over, chunked });
        expect(expectEnvelopeShape(tooLarge.response!, `1 MiB + 1, chunked: ${chunked}`)).toEqual(TOO_LARGE);
      }
    });

    it('authentication comes before the body: a 2 MiB body without a token → 401, to a missing book → 404', async () => {
      const noToken = await rawRequest(port, { method: 'POST', path: '/book', headers: [['Content-Type', 'application/json']], body: bookBodyOfLength(2 * MIB) });
      expect(expectEnvelopeShape(noToken.response!, 'no token')).toEqual({ status: 401, message: 'Authorization token required', data: null });
      const missing = await rawRequest(port, {
        method: 'PUT',
        path: '/book/8000000000000000000',
        headers: [['Authorization', token], ['Content-Type', 'application/json']],
        body: bookBodyOfLength(2 * MIB),
      });
      expect(expectEnvelopeShape(missing.response!, 'missing book')).toEqual({ status: 404, message: 'Book not found', data: null });
      await expectStillAnswering(service.client, token);
    });
  });

  describe('headers over the 128 KiB limit (MAX_HEADER_BYTES) → 431/414/400 envelope or a clean close', () => {
    const service = useService('sqlite', { LOG_LEVEL: 'warn' });
    let port: number;
    let token: string;

    beforeAll(async () => {
      port = portOf(service.current.baseUrl);
      token = await service.client.token();
    });

    it.each([
      ['one 130 KiB header', () => ({ method: 'GET', path: '/books', headers: [['X-Big', 'a'.repeat(OVER)]] as Array<[string, string]> })],
      ['a 130 KiB Authorization header', () => ({ method: 'GET', path: '/books', headers: [['Authorization', `Bearer ${'a'.repeat(OVER)}`]] as Array<[string, string]> })],
      ['6,000 small headers (~140 KiB)', () => ({ method: 'GET', path: '/books', headers: Array.from({ length: 6000 }, (_, i) => [`X-H${i}`, 'v'.repeat(16)] as [string, string]) })],
      ['a 130 KiB URL (/book/<digits>)', () => ({ method: 'GET', path: `/book/${'1'.repeat(OVER)}`, headers: [] as Array<[string, string]> })],
      ['a 130 KiB query string', () => ({ method: 'GET', path: `/books?q=${'a'.repeat(OVER)}`, headers: [] as Array<[string, string]> })],
      ['a 1 MiB URL', () => ({ method: 'GET', path: `/${'a'.repeat(MIB)}`, headers: [] as Array<[string, string]> })],
      ['an oversize POST with a body', () => ({ method: 'POST', path: '/book', headers: [['X-Big', 'a'.repeat(OVER)]] as Array<[string, string]>, body: '{"title":"a","author":"b","year":1}' })],
    ])('%s: envelope (431/414/400) or a clean close; the next request is answered', async (_name, build) => {
      const request = build();
      const exchange = await rawRequest(port, { ...request, headers: [['Authorization', token], ...request.headers] }, { timeoutMs: 10_000, untilClose: true });
      expectEnvelopeOrCleanClose(exchange, [400, 414, 431], _name);
      await expectStillAnswering(service.client, token);
    });

    // Found by the fuzz (seed 957091994, on Node 24): bytes past a request's Content-Length
    // are an unparsable next request; the server closed before answering the first one.
    // Tests finish-answers-on-client-error: skipped when NODE_HTTP_PARTS turns it off.
    it.skipIf(!machinery.finishAnswersOnClientError).each([
      ['POST /token with Content-Length: 0', 'POST', '/token', 400],
      ['GET /books', 'GET', '/books', 200],
    ] as const)('%s followed by garbage on the connection: the request is answered in full, then the connection closes', async (_name, method, path, status) => {
      for (const expect100 of [false, true]) {
        const headers: Array<[string, string]> = [['Authorization', token], ['Content-Length', '0']];
        if (expect100) headers.push(['Expect', '100-continue']);
        const exchange = await rawRequest(port, { method, path, headers, body: '{"not":"an HTTP request"}' }, { timeoutMs: 5_000, untilClose: true });
        expect(exchange.closed).toBe(true);
        const text = exchange.received.toString('latin1');
        const start = text.indexOf(`HTTP/1.1 ${status} `);
        expect(start, text.slice(0, 200)).toBeGreaterThanOrEqual(0);
        const answer = text.slice(start);
        expect(answer).toMatch(/\r\n\r\n\{"status":/);
        // The answer's own body, by its Content-Length: the garbage's 400 envelope may follow it
        // (answered once the answers before it are out), in either order of arrival.
        const bodyStart = answer.indexOf('\r\n\r\n') + 4;
        const length = Number(/\r\ncontent-length: (\d+)\r\n/i.exec(answer.slice(0, bodyStart))?.[1]);
        expect(JSON.parse(answer.slice(bodyStart, bodyStart + length)).status).toBe(status);
      }
    });

    it('headers just under the limit (120 KiB) are served normally', async () => {
      const exchange = await rawRequest(port, { method: 'GET', path: '/books', headers: [['Authorization', token], ['X-Big', 'a'.repeat(120 * 1024)]] });
      expect(exchange.response?.status).toBe(200);
    });

    it('oversize headers on a keep-alive connection after a first response: the first response is whole, then an envelope or a close, never bytes inside it', async () => {
      const first = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token], ['Connection', 'keep-alive']] });
      const second = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token], ['X-Big', 'a'.repeat(OVER)]] });
      const exchange = await rawExchange(
        port,
        async (socket) => {
          await write(socket, first);
          await sleep(200); // the first response is written before the second request arrives
          await write(socket, second);
        },
        { timeoutMs: 10_000, untilClose: true },
      );
      expect(exchange.closed).toBe(true);
      const text = exchange.received.toString('latin1');
      const responses = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((part) => part !== '');
      expect(responses.length, text.slice(0, 2000)).toBeGreaterThanOrEqual(1);
      expect(responses.length, text.slice(0, 2000)).toBeLessThanOrEqual(2);
      expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
      const firstBody = responses[0]!.slice(responses[0]!.indexOf('\r\n\r\n') + 4);
      expect(JSON.parse(firstBody)).toMatchObject({ status: 200, message: 'Books retrieved successfully' });
      if (responses[1] !== undefined) expect(responses[1]).toMatch(/^HTTP\/1\.1 (400|414|431) /);
      await expectStillAnswering(service.client, token);
    });

    // Found through a reverse proxy (deploy/nginx): a bad request on a connection that already
    // carried one was closed without an answer, as Node does, and the proxy took the instance
    // for a failed one. Every earlier answer is out whole, so the error is answered too.
    // Tests finish-answers-on-client-error: skipped when NODE_HTTP_PARTS turns it off.
    it.skipIf(!machinery.finishAnswersOnClientError).each([
      ['a raw UTF-8 byte in the URL', Buffer.from('GET /book/\xc3\xa9 HTTP/1.1\r\nHost: x\r\n\r\n', 'latin1'), 400, 'Bad request'],
      ['a control character in a header value', Buffer.from('GET /books HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n', 'latin1'), 400, 'Bad request'],
      ['headers over 128 KiB', () => requestBytes({ method: 'GET', path: '/books', headers: [['X-Big', 'a'.repeat(OVER)]] }), 431, 'Request Header Fields Too Large'],
    ] as const)('%s after a first request on a keep-alive connection: the first answered, then the envelope, then the close', async (_name, bad, status, message) => {
      const first = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token], ['Connection', 'keep-alive']] });
      const second = typeof bad === 'function' ? bad() : bad;
      for (const pause of [200, 0]) {
        // Written after the first answer, or sent with the first request (pipelined).
        const exchange = await rawExchange(
          port,
          async (socket) => {
            await write(socket, first);
            if (pause > 0) await sleep(pause);
            await write(socket, second);
          },
          { timeoutMs: 10_000, untilClose: true },
        );
        expect(exchange.closed).toBe(true);
        const text = exchange.received.toString('latin1');
        const responses = text.split(/(?=HTTP\/1\.1 \d{3} )/).filter((part) => part !== '');
        expect(responses, text.slice(0, 2000)).toHaveLength(2);
        expect(responses[0]).toMatch(/^HTTP\/1\.1 200 /);
        expect(responses[1]).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
        expect(responses[1]).toMatch(/\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
        expect(JSON.parse(responses[1]!.slice(responses[1]!.indexOf('\r\n\r\n') + 4))).toEqual({ status, message, data: null });
      }
      await expectStillAnswering(service.client, token);
    });

    it('an HTTP/1.1 request without Host → 400 "Bad request" envelope (RFC 9112 §3.2); HTTP/1.0 needs none', async () => {
      const exchange = await rawExchange(port, (socket) => void socket.write('GET /healthz HTTP/1.1\r\n\r\n'), { timeoutMs: 5_000, untilClose: true });
      expect(exchange.closed).toBe(true);
      expect(exchange.response?.status).toBe(400);
      expect(JSON.parse(exchange.response?.body ?? '')).toEqual({ status: 400, message: 'Bad request', data: null });
      const old = await rawExchange(port, (socket) => void socket.write('GET /healthz HTTP/1.0\r\n\r\n'), { timeoutMs: 5_000, untilClose: true });
      expect(old.response?.status).toBe(200);
    });
  });

  describe('REQUEST_TIMEOUT=2: slow clients are cut off', () => {
    const service = useService('sqlite', { REQUEST_TIMEOUT: '2', LOG_LEVEL: 'warn' });
    let port: number;
    let token: string;

    beforeAll(async () => {
      port = portOf(service.current.baseUrl);
      token = await service.client.token();
    });

    /** Writes `first`, then one byte of `rest` per second, until the server closes or 12 s pass. */
    function trickle(first: Buffer | string, rest: string, timeoutMs = 12_000): Promise<RawExchange & { bytesTrickled: number }> {
      let bytesTrickled = 0;
      return rawExchange(
        port,
        async (socket) => {
          await write(socket, first);
          for (const char of rest) {
            await sleep(1_000);
            if (socket.destroyed) return;
            await write(socket, char);
            bytesTrickled += 1;
          }
        },
        { timeoutMs, untilClose: true },
      ).then((exchange) => ({ ...exchange, bytesTrickled }));
    }

    function expectCutOff(exchange: RawExchange, context: string) {
      expect(exchange.closed, `${context}: still open after ${exchange.elapsedMs} ms`).toBe(true);
      expect(exchange.elapsedMs, context).toBeLessThan(5_000);
      expectEnvelopeOrCleanClose(exchange, [408], context);
    }

    it('a body trickled at one byte per second (Content-Length: 100): 408 envelope or close within ~5 s; nothing stored', async () => {
      const before = (await service.client.request('GET', '/books', { token })).text;
      const headers = requestBytes({
        method: 'POST',
        path: '/book',
        headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Content-Length', '100']],
      });
      const body = JSON.stringify({ title: 'Slow', author: 'Loris', year: 2000 }).padEnd(100, ' ');
      const exchange = await trickle(headers, body);
      expectCutOff(exchange, 'slow body');
      if (exchange.response) expect(JSON.parse(exchange.response.body)).toEqual({ status: 408, message: 'Request timeout', data: null });
      expect((await service.client.request('GET', '/books', { token })).text).toBe(before);
      await expectStillAnswering(service.client, token);
    });

    it('a chunked body trickled one byte per second: cut off within ~5 s', async () => {
      const headers = requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Transfer-Encoding', 'chunked']] });
      const exchange = await trickle(headers, '1\r\n{\r\n1\r\n"\r\n1\r\na\r\n');
      expectCutOff(exchange, 'slow chunked body');
      await expectStillAnswering(service.client, token);
    });

    it('headers trickled one byte per second (slowloris): cut off within ~5 s', async () => {
      const exchange = await trickle('GET /books HTTP/1.1\r\nHost: x\r\n', `Authorization: ${token}\r\n\r\n`);
      expectCutOff(exchange, 'slow headers');
      await expectStillAnswering(service.client, token);
    });

    it('a connection that sends nothing: closed within ~5 s', async () => {
      const exchange = await rawExchange(port, () => undefined, { timeoutMs: 12_000, untilClose: true });
      expectCutOff(exchange, 'idle connection');
    });

    it('twenty slow uploads at once are all cut off, and the service keeps answering meanwhile', async () => {
      const headers = requestBytes({
        method: 'POST',
        path: '/book',
        headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Content-Length', '100']],
      });
      const slow = Array.from({ length: 20 }, () => trickle(headers, 'x'.repeat(10)));
      await sleep(500);
      await expectStillAnswering(service.client, token);
      for (const exchange of await Promise.all(slow)) expectCutOff(exchange, 'one of twenty slow uploads');
    });

    it('a request that completes within the deadline (body in two parts, 1 s apart) is served', async () => {
      const body = JSON.stringify({ title: 'Patient', author: 'Client', year: 2001 });
      const exchange = await rawExchange(
        port,
        async (socket) => {
          await write(socket, requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)]] }));
          await write(socket, body.slice(0, 10));
          await sleep(1_000);
          await write(socket, body.slice(10));
        },
        { timeoutMs: 10_000 },
      );
      expect(exchange.response?.status, exchange.received.toString()).toBe(201);
    });
  });
});
