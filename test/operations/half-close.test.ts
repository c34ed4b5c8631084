// Half-closed clients: a client that sends its request(s) and then shuts down its sending side
// (TCP FIN: HTTP/1.0 clients, `nc -N`, some proxies) gets the answer to every request it sent,
// on every route, and then the server closes the connection. Real server, bare sockets.
//
// What counts as a request that must be answered: one whose headers and whole body (by its
// Content-Length or chunked framing) arrived before the FIN. A request cut off before its
// headers end, or before its body does, or bytes Node cannot parse, may get one complete
// answer (400, or an answer given before the body was read, such as a 401) or a close without
// one, never a cut-off answer, and never a stored book.
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { machinery } from '../helpers/node-http.js';
import { halfClosedExchange, parseResponses, portOf, requestBytes, type HalfClosedExchange, type RawRequest, type RawResponse } from '../helpers/client/raw-http.js';
import { ApiClient } from '../helpers/client/api-client.js';
import { startService, useService } from '../helpers/service/start-service.js';

const BOOK = JSON.stringify({ title: 'Half-closed', author: 'A. Client', year: 1999 });
const TOO_LARGE_BYTES = 2 * 1024 * 1024;

/** The ids in a GET /books answer, exact (ids may exceed 2^53). */
async function bookIds(client: ApiClient, token: string): Promise<Set<string>> {
  const response = await client.request('GET', '/books', { token });
  expect(response.status).toBe(200);
  return new Set([...response.text.matchAll(/"id":(\d+)/g)].map((match) => match[1] as string));
}

function createdId(response: RawResponse | undefined): string | undefined {
  return response?.status === 201 ? /"id":(\d+)/.exec(response.body)?.[1] : undefined;
}

/** The server's side of each connection, by the client's port. */
function trackServerSockets(server: Server): Map<number | undefined, Socket> {
  const sockets = new Map<number | undefined, Socket>();
  server.on('connection', (socket: Socket) => sockets.set(socket.remotePort, socket));
  return sockets;
}

/** The server's side of the client's connection is gone: no socket leaked half-open. */
async function expectClosedOnServer(sockets: Map<number | undefined, Socket>, clientPort: number | undefined, context: string) {
  const socket = sockets.get(clientPort);
  for (let waited = 0; socket !== undefined && !socket.destroyed && waited < 2_000; waited += 10) await sleep(10);
  expect(socket, `${context}: the server never saw the connection`).toBeDefined();
  expect(socket?.destroyed, `${context}: the server still holds the socket`).toBe(true);
  sockets.delete(clientPort);
}

function describeExchange(exchange: HalfClosedExchange): string {
  return `responses ${JSON.stringify(exchange.responses.map((response) => response.status))}, ${exchange.rest.length} bytes left over, closed: ${exchange.closed}, error: ${exchange.error ?? 'none'}, ${exchange.elapsedMs} ms`;
}

// Tests of the answer-half-closed-clients part: skipped when NODE_HTTP_PARTS turns it off.
describe.skipIf(!machinery.answerHalfClosedClients)('half-closed clients get every answer, then the close (SQLite)', () => {
  const handle = useService('sqlite');
  let port: number;
  let token: string;
  let serverSockets: Map<number | undefined, Socket>;

  beforeAll(async () => {
    port = portOf(handle.current.baseUrl);
    token = await handle.client.token();
    serverSockets = trackServerSockets(handle.current.app.server);
  });

  const newBook = async () => String((await handle.client.createBook(token, { title: 'Fixture', author: 'F', year: 2000 })).id);

  /** The routes, each with the answer it must get. */
  const routes: Array<{ name: string; status: number; request: () => Promise<RawRequest> }> = [
    { name: 'POST /token', status: 200, request: async () => ({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json']], body: '{"username":"admin","password":"password"}' }) },
    { name: 'GET /books', status: 200, request: async () => ({ method: 'GET', path: '/books', headers: [['Authorization', token]] }) },
    { name: 'POST /book', status: 201, request: async () => ({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Content-Type', 'application/json']], body: BOOK }) },
    { name: 'GET /book/:id', status: 200, request: async () => ({ method: 'GET', path: `/book/${await newBook()}`, headers: [['Authorization', token]] }) },
    { name: 'PUT /book/:id', status: 200, request: async () => ({ method: 'PUT', path: `/book/${await newBook()}`, headers: [['Authorization', token]], body: '{"year":2001}' }) },
    { name: 'DELETE /book/:id', status: 200, request: async () => ({ method: 'DELETE', path: `/book/${await newBook()}`, headers: [['Authorization', token]] }) },
    { name: 'GET /nowhere (404)', status: 404, request: async () => ({ method: 'GET', path: '/nowhere', headers: [['Authorization', token]] }) },
    { name: 'PATCH /books (405)', status: 405, request: async () => ({ method: 'PATCH', path: '/books', headers: [['Authorization', token]] }) },
    { name: 'POST /book bad body (400)', status: 400, request: async () => ({ method: 'POST', path: '/book', headers: [['Authorization', token]], body: '{"title":' }) },
    { name: 'GET /books without a token (401)', status: 401, request: async () => ({ method: 'GET', path: '/books' }) },
    { name: 'POST /book without a token, answered before the body is read (401)', status: 401, request: async () => ({ method: 'POST', path: '/book', body: BOOK }) },
    { name: 'POST /book with 2 MiB (413)', status: 413, request: async () => ({ method: 'POST', path: '/book', headers: [['Authorization', token]], body: Buffer.alloc(TOO_LARGE_BYTES, 'x') }) },
    { name: 'GET /healthz', status: 200, request: async () => ({ method: 'GET', path: '/healthz' }) },
    { name: 'GET /readyz', status: 200, request: async () => ({ method: 'GET', path: '/readyz' }) },
  ];

  for (const connection of ['close', 'keep-alive'] as const) {
    for (const route of routes) {
      it(`${route.name}, Connection: ${connection}, then FIN: the whole answer, then the close`, async () => {
        const request = await route.request();
        request.headers = [...(request.headers ?? []), ['Connection', connection]];
        const before = route.name === 'POST /book' ? await bookIds(handle.client, token) : undefined;

        const exchange = await halfClosedExchange(port, requestBytes(request));

        expect(exchange.responses.map((response) => response.status), describeExchange(exchange)).toEqual([route.status]);
        expect(exchange.rest.length, 'bytes after the answer').toBe(0);
        expect(exchange.closed, 'the server closes the connection after the answer').toBe(true);
        expect(exchange.error).toBeUndefined();
        if (before !== undefined) {
          // The book exists if and only if the answer was 201.
          const after = await bookIds(handle.client, token);
          const id = createdId(exchange.responses[0]);
          expect([...after].filter((known) => !before.has(known))).toEqual(id === undefined ? [] : [id]);
        }
        await expectClosedOnServer(serverSockets, exchange.localPort, route.name);
      });
    }
  }

  it('requests pipelined before the FIN: every answer, in order, then the close', async () => {
    const before = await bookIds(handle.client, token);
    const keepAlive: Array<[string, string]> = [['Authorization', token], ['Connection', 'keep-alive']];
    const pipeline = Buffer.concat([
      requestBytes({ method: 'GET', path: '/healthz', headers: [['Connection', 'keep-alive']] }),
      requestBytes({ method: 'POST', path: '/book', headers: keepAlive, body: BOOK }),
      requestBytes({ method: 'POST', path: '/book', headers: keepAlive, body: '[]' }),
      requestBytes({ method: 'GET', path: '/nowhere', headers: keepAlive }),
      requestBytes({ method: 'POST', path: '/book', headers: keepAlive, body: BOOK, chunked: true }),
      requestBytes({ method: 'GET', path: '/books', headers: keepAlive }),
    ]);
    const exchange = await halfClosedExchange(port, pipeline);
    expect(exchange.responses.map((response) => response.status), describeExchange(exchange)).toEqual([200, 201, 400, 404, 201, 200]);
    expect(exchange.rest.length).toBe(0);
    expect(exchange.closed).toBe(true);
    const created = exchange.responses.map(createdId).filter((id) => id !== undefined);
    const after = await bookIds(handle.client, token);
    expect([...after].filter((id) => !before.has(id)).sort()).toEqual(created.sort());
    await expectClosedOnServer(serverSockets, exchange.localPort, 'pipeline');
  });

  it('a keep-alive connection half-closed while idle is closed by the server at once', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let received = Buffer.alloc(0);
    let serverEnded = false;
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('end', () => (serverEnded = true));
    socket.on('error', () => undefined);
    try {
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      const clientPort = socket.localPort;
      socket.write(requestBytes({ method: 'GET', path: '/healthz', headers: [['Connection', 'keep-alive']] }));
      for (let waited = 0; parseResponses(received, { closed: false }).responses.length === 0 && waited < 2_000; waited += 10) await sleep(10);
      expect(parseResponses(received, { closed: false }).responses.map((response) => response.status)).toEqual([200]);
      await sleep(100);
      expect(serverEnded, 'kept open after a keep-alive answer').toBe(false);
      socket.end();
      for (let waited = 0; !serverEnded && waited < 1_000; waited += 10) await sleep(10);
      expect(serverEnded, 'the server did not close a half-closed idle connection').toBe(true);
      await expectClosedOnServer(serverSockets, clientPort, 'idle keep-alive');
    } finally {
      socket.destroy();
    }
  });
});

// Skipped when NODE_HTTP_PARTS turns answer-half-closed-clients off, as above.
describe.skipIf(!machinery.answerHalfClosedClients)('half-closed clients and shutdown (SQLite)', () => {
  it('half-closed connections with requests in flight are answered and do not hold up stopping the service', async () => {
    const own = await startService({ kind: 'sqlite' });
    const port = portOf(own.baseUrl);
    const token = await new ApiClient(own.baseUrl).token();
    // An idle keep-alive connection (one request answered), never half-closed: the drain closes it.
    const idle = connect({ port, host: '127.0.0.1' });
    idle.on('error', () => undefined);
    await new Promise<void>((resolve) => idle.once('connect', () => resolve()));
    idle.write(requestBytes({ method: 'GET', path: '/healthz', headers: [['Connection', 'keep-alive']] }));
    await new Promise<void>((resolve) => idle.once('data', () => resolve()));
    try {
      let arrived = 0;
      own.app.server.on('request', () => (arrived += 1));
      const exchanges = Array.from({ length: 8 }, () =>
        halfClosedExchange(port, requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Connection', 'keep-alive']], body: BOOK })),
      );
      // Every request has been read (so it is in flight, not an idle connection), some answered.
      for (let waited = 0; arrived < 8 && waited < 2_000; waited += 1) await sleep(1);
      const stoppingAt = Date.now();
      await own.stop();
      expect(Date.now() - stoppingAt, 'stop() waited on a half-closed connection').toBeLessThan(2_000);
      for (const exchange of await Promise.all(exchanges)) {
        expect(exchange.responses.map((response) => response.status), describeExchange(exchange)).toEqual([201]);
        expect(exchange.closed).toBe(true);
      }
    } finally {
      idle.destroy();
      await own.stop();
    }
  });
});
