// Oversized uploads with Node's own HTTP client: a client that sends a 10 MB body (and keeps
// writing it after the answer arrives) must read its 413 envelope every time, never lose it to
// an EPIPE or ECONNRESET. The server answers with `Connection: close` and then closes
// gracefully: its side first, while it keeps reading and discarding what the client still
// sends, until the client is done or a bound (5 s) is reached. The same holds for any other
// answer given before the body was read (401 on POST /book, 429 on POST /token), for chunked
// bodies, and for many uploads at once. A client that stalls, or keeps sending flat out, cannot
// hold its socket past the bounds (time, bytes), lingering sockets do not hold up closing the
// service, and keep-alive of ordinary requests is unchanged. SQLite only: this is the HTTP layer.
import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { LINGER_MAX_BYTES, LINGER_MS } from '../../src/http/node/lingering-close.js';
import { machinery } from '../helpers/node-http.js';
import { parseResponse, portOf, requestBytes, type RawResponse } from '../helpers/client/raw-http.js';
import { startService, useService } from '../helpers/service/start-service.js';

const MB = 1000 * 1000;
const UPLOAD_BYTES = 10 * MB;
const CHUNK = Buffer.alloc(64 * 1024, 'x');

const TOO_LARGE = '{"status":413,"message":"Request body too large","data":null}';
const TOKEN_REQUIRED = '{"status":401,"message":"Authorization token required","data":null}';
const TOO_MANY = '{"status":429,"message":"Too many requests","data":null}';

interface Outcome {
  status: number | undefined;
  headers: IncomingHttpHeaders;
  body: string;
  /** Every error the client saw (EPIPE, ECONNRESET, socket hang up, ...), in order. */
  errors: string[];
}

/**
 * One upload of `bytes` bytes with node:http, as a typical client does: announce the length
 * (or send it chunked), write the body in 64 KiB pieces as fast as the socket takes them, and
 * keep writing even after the answer has arrived. Resolves once the connection is closed.
 */
function upload(
  port: number,
  { path, headers = {}, bytes = UPLOAD_BYTES, chunked = false }: { path: string; headers?: Record<string, string>; bytes?: number; chunked?: boolean },
): Promise<Outcome> {
  return new Promise((resolve) => {
    const outcome: Outcome = { status: undefined, headers: {}, body: '', errors: [] };
    // A keep-alive client, as Node's default agent is: closing is the server's decision.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const req = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path,
      agent,
      headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(bytes) }), ...headers },
    });
    const giveUp = setTimeout(() => {
      outcome.errors.push('client timeout (no close within 8 s)');
      req.destroy();
    }, 8_000);
    req.on('response', (res) => {
      outcome.status = res.statusCode;
      outcome.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (text: string) => (outcome.body += text));
      res.on('error', (error: NodeJS.ErrnoException) => outcome.errors.push(`response: ${error.code ?? error.message}`));
    });
    req.on('error', (error: NodeJS.ErrnoException) => outcome.errors.push(error.code ?? error.message));
    req.on('close', () => {
      clearTimeout(giveUp);
      agent.destroy();
      resolve(outcome);
    });
    let sent = 0;
    const pump = () => {
      while (sent < bytes && !req.destroyed) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, bytes - sent));
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!req.destroyed) req.end();
    };
    pump();
  });
}

function describeOutcome(outcome: Outcome): string {
  return `HTTP ${outcome.status ?? '(none)'} ${JSON.stringify(outcome.body.slice(0, 200))} errors: ${outcome.errors.join(', ') || 'none'}`;
}

/** The exact answer, and no error of any kind on the client's side. */
function expectAnswer(outcomes: Outcome[], status: number, body: string, context: string) {
  const failures = outcomes.map((outcome, index) => ({ index, outcome })).filter(({ outcome }) => outcome.status !== status || outcome.body !== body || outcome.errors.length > 0);
  expect(
    failures.map(({ index, outcome }) => `#${index + 1}: ${describeOutcome(outcome)}`),
    `${failures.length} of ${outcomes.length} ${context} did not get their ${status} envelope cleanly`,
  ).toEqual([]);
  for (const outcome of outcomes) expect(outcome.headers.connection).toBe('close');
}

async function sequentially(count: number, run: () => Promise<Outcome>): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < count; i++) outcomes.push(await run());
  return outcomes;
}

/** A bare connection on which requests can be sent one after another (keep-alive). */
function keepAliveConnection(port: number) {
  const socket: Socket = connect({ port, host: '127.0.0.1' });
  let buffered = Buffer.alloc(0);
  let closed = false;
  socket.on('data', (chunk: Buffer) => (buffered = Buffer.concat([buffered, chunk])));
  socket.on('error', () => undefined);
  socket.on('close', () => (closed = true));
  return {
    /** Sends one request and waits for its complete response (undefined: the connection closed first). */
    async exchange(bytes: Buffer): Promise<RawResponse | undefined> {
      buffered = Buffer.alloc(0);
      socket.write(bytes);
      for (let waited = 0; waited < 5_000; waited += 10) {
        const response = parseResponse(buffered, { closed: false });
        if (response !== undefined) return response;
        if (closed) return undefined;
        await sleep(10);
      }
      return undefined;
    },
    isClosed: () => closed,
    close: () => socket.destroy(),
  };
}

// Tests of lingering close itself: skipped when NODE_HTTP_PARTS turns it off.
const itLingering = it.skipIf(!machinery.lingeringClose);

describe('oversized uploads with node:http (SQLite)', () => {
  const service = useService('sqlite');
  let port: number;
  let token: string;

  beforeAll(async () => {
    port = portOf(service.current.baseUrl);
    token = await service.client.token();
  });

  itLingering('20 uploads of 10 MB in a row to POST /book with a valid token: each reads its 413 envelope, none sees EPIPE or ECONNRESET', async () => {
    const outcomes = await sequentially(20, () => upload(port, { path: '/book', headers: { authorization: token } }));
    expectAnswer(outcomes, 413, TOO_LARGE, 'uploads to POST /book');
  });

  itLingering('uploads of 10 MB several at once (4 rounds of 8): every one reads its 413 envelope', async () => {
    const outcomes: Outcome[] = [];
    for (let round = 0; round < 4; round++) {
      outcomes.push(...(await Promise.all(Array.from({ length: 8 }, () => upload(port, { path: '/book', headers: { authorization: token } })))));
    }
    expectAnswer(outcomes, 413, TOO_LARGE, 'concurrent uploads to POST /book');
  });

  itLingering('5 uploads of 10 MB to POST /token: each reads its 413 envelope', async () => {
    const outcomes = await sequentially(5, () => upload(port, { path: '/token' }));
    expectAnswer(outcomes, 413, TOO_LARGE, 'uploads to POST /token');
  });

  itLingering('a chunked upload (no Content-Length) that grows past 1 MiB: 413 envelope, no error', async () => {
    const outcomes = await sequentially(5, () => upload(port, { path: '/book', headers: { authorization: token }, chunked: true }));
    expectAnswer(outcomes, 413, TOO_LARGE, 'chunked uploads to POST /book');
  });

  itLingering('an early answer that leaves a big body unread (401 on POST /book without a token, also at an undecodable /book/%zz) is read cleanly too', async () => {
    const outcomes = await sequentially(3, () => upload(port, { path: '/book' }));
    expectAnswer(outcomes, 401, TOKEN_REQUIRED, 'unauthenticated uploads to POST /book');
    // Answered outside Fastify's hooks (frameworkErrors).
    const undecodable = await sequentially(2, () => upload(port, { path: '/book/%zz' }));
    expectAnswer(undecodable, 401, TOKEN_REQUIRED, 'unauthenticated uploads to POST /book/%zz');
  });

  itLingering('a client that announces 10 MB and then stalls: it gets its 413 at once, the server keeps the socket a while, and closes it by the bound', async () => {
    // allowHalfOpen: the client does not close its side when the server closes its own.
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    const errors: string[] = [];
    let ended = false;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => (ended = true));
    socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(
      requestBytes({
        method: 'POST',
        path: '/book',
        headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Content-Length', String(UPLOAD_BYTES)], ['Connection', 'keep-alive']],
      }),
    );
    socket.write(CHUNK);
    const started = Date.now();
    let response: RawResponse | undefined;
    while (response === undefined && Date.now() - started < 2_000) {
      await sleep(10);
      response = parseResponse(Buffer.concat(chunks), { closed: false });
    }
    expect(response?.status, 'no 413 within 2 s').toBe(413);
    expect(response!.body).toBe(TOO_LARGE);
    expect(response!.headers.connection).toBe('close');
    await sleep(300);
    expect(ended, 'the server half-closes its side after the answer').toBe(true);

    // Within the bound the server still reads (and discards) what the client sends: no reset.
    // (A socket the server has let go of answers the first write with RST, the next fails.)
    await sleep(500);
    for (let i = 0; i < 3; i++) {
      socket.write(CHUNK);
      await sleep(200);
    }
    expect(errors, 'reset while the server should still be lingering').toEqual([]);

    // Past the bound the server has let go of the socket: what the client sends now is refused.
    await sleep(Math.max(0, started + LINGER_MS + 1_000 - Date.now()));
    const deadline = Date.now() + 3_000;
    while (errors.length === 0 && !socket.destroyed && Date.now() < deadline) {
      socket.write(CHUNK);
      await sleep(50);
    }
    expect(errors.length > 0 || socket.destroyed, `the socket is still open ${Date.now() - started} ms after the 413`).toBe(true);
    expect(errors[0] ?? 'ECONNRESET').toMatch(/ECONNRESET|EPIPE/);
    socket.destroy();
  }, 20_000);

  itLingering('a client that keeps sending flat out after its 413 is cut off once it has sent LINGER_MAX_BYTES more, not after the time bound', async () => {
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const chunks: Buffer[] = [];
    let error: string | undefined;
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', token], ['Content-Type', 'application/json'], ['Content-Length', String(1000 * MB)]] }));
    for (let waited = 0; parseResponse(Buffer.concat(chunks), { closed: false }) === undefined && waited < 2_000; waited += 10) await sleep(10);
    expect(parseResponse(Buffer.concat(chunks), { closed: false })?.body).toBe(TOO_LARGE);
    const started = Date.now();
    const big = Buffer.alloc(1024 * 1024, 'x');
    let sent = 0;
    while (error === undefined && !socket.destroyed && sent < 20 * LINGER_MAX_BYTES && Date.now() - started < LINGER_MS) {
      sent += big.length;
      if (!socket.write(big)) await Promise.race([new Promise((resolve) => socket.once('drain', resolve)), sleep(100)]);
    }
    socket.destroy();
    expect(error, `still accepted after ${sent} bytes and ${Date.now() - started} ms`).toMatch(/ECONNRESET|EPIPE/);
    expect(Date.now() - started).toBeLessThan(LINGER_MS - 1_000);
    // What the client had in flight when the server let go (socket buffers) comes on top of the cap.
    expect(sent).toBeLessThan(LINGER_MAX_BYTES + 32 * 1024 * 1024);
  });

  itLingering('a lingering socket does not hold up closing the service: app.close() returns well within the bound', async () => {
    const own = await startService({ kind: 'sqlite' });
    const socket = connect({ port: portOf(own.baseUrl), host: '127.0.0.1', allowHalfOpen: true });
    socket.on('error', () => undefined);
    try {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      socket.write(requestBytes({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json'], ['Content-Length', String(UPLOAD_BYTES)]] }));
      socket.write(CHUNK);
      for (let waited = 0; parseResponse(Buffer.concat(chunks), { closed: false }) === undefined && waited < 2_000; waited += 10) await sleep(10);
      expect(parseResponse(Buffer.concat(chunks), { closed: false })?.status).toBe(413);
      const closingAt = Date.now();
      await own.stop();
      expect(Date.now() - closingAt, 'app.close() waited for the lingering socket').toBeLessThan(LINGER_MS / 2);
    } finally {
      socket.destroy();
    }
  });

  it('keep-alive is unchanged: normal requests, and a 401 to a small body, leave the connection open for the next request', async () => {
    const connection = keepAliveConnection(port);
    const book = JSON.stringify({ title: 'Kept alive', author: 'A', year: 2000 });
    const post = (authorization: string) =>
      requestBytes({
        method: 'POST',
        path: '/book',
        headers: [['Authorization', authorization], ['Content-Type', 'application/json'], ['Connection', 'keep-alive']],
        body: book,
      });
    const list = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token], ['Connection', 'keep-alive']] });
    try {
      const created = await connection.exchange(post(token));
      expect(created?.status).toBe(201);
      expect(created?.headers.connection).not.toBe('close');
      const listed = await connection.exchange(list);
      expect(listed?.status, 'second request on the same connection').toBe(200);
      const refused = await connection.exchange(post('not-a-token'));
      expect(refused?.status).toBe(401);
      expect(refused?.headers.connection, 'a 401 to a body already received keeps the connection').not.toBe('close');
      const again = await connection.exchange(list);
      expect(again?.status, 'request after the 401 on the same connection').toBe(200);
      expect(connection.isClosed()).toBe(false);
    } finally {
      connection.close();
    }
  });

  // Last: it locks POST /token for this address for a minute.
  itLingering('429 on POST /token (login limit reached) with a 10 MB body is read cleanly', async () => {
    for (let i = 0; i < 10; i++) {
      const failed = await service.client.request('POST', '/token', { body: { username: 'admin', password: 'wrong' } });
      expect(failed.status).toBe(401);
    }
    const outcomes = await sequentially(3, () => upload(port, { path: '/token' }));
    expectAnswer(outcomes, 429, TOO_MANY, 'uploads to POST /token while limited');
  });
});
