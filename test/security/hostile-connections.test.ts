// A hostile-input run over bare sockets: 5,000 requests, 32 connections at a time, a mix of
// valid and hostile requests, some half-closed after sending (TCP FIN), some pipelined, some
// with garbage after them, some cut off in their headers or body. Seeded (HOSTILE_SEED replays
// a run). SQLite only: this is the HTTP layer.
//
// The rules, per connection:
//  - a complete request (headers and the whole body by its framing, sent before any garbage,
//    cut or FIN) always gets its whole answer, in order, with a status it may have, unless an
//    earlier answer on the connection said `Connection: close` (413, a body that is not JSON):
//    then the requests behind it are not read, and the client knows to send them again;
//  - what follows the complete requests, when it is not a complete request (bytes Node cannot
//    parse, headers or a body cut off by the FIN), may get one whole 4xx answer (400, or an
//    answer given before the body was read, such as 401) or none: never a cut-off answer;
//  - the server closes the connection once it has answered, when the client half-closed, asked
//    for `Connection: close`, or sent something unparseable or cut off;
//  - a book is stored if and only if a 201 said so (and a deleted one is gone only after a 200).
import { connect } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { machinery } from '../helpers/node-http.js';
import { parseResponses, portOf, requestBytes, type RawRequest, type RawResponse } from '../helpers/client/raw-http.js';
import type { ApiClient } from '../helpers/client/api-client.js';
import { useService } from '../helpers/service/start-service.js';

const REQUESTS = 5_000;
const CONCURRENCY = 32;
const SEED = process.env.HOSTILE_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.HOSTILE_SEED);
const DELETABLE_BOOKS = 40;
const BOOK = JSON.stringify({ title: 'Hostile run', author: 'H', year: 1984 });

/** mulberry32: a small seeded PRNG, so that a failing run can be replayed. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    chance: (p: number) => next() < p,
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T,
  };
}
type Random = ReturnType<typeof random>;

/** What a complete request is, for the bookkeeping of writes. */
type Effect = { kind: 'create' } | { kind: 'delete'; id: string } | { kind: 'none' };

interface CompleteRequest {
  name: string;
  request: RawRequest;
  /** The statuses it may get; undefined: any (still a whole answer). */
  statuses?: number[];
  effect: Effect;
  /** Must be the last on its connection (the server closes after it, or it is huge). */
  alone?: boolean;
  /** Bytes sent as is instead of `request` (HTTP/1.0). */
  raw?: Buffer;
}

interface Conversation {
  complete: CompleteRequest[];
  /** Bytes after the complete requests that are not a complete request. */
  tail: { kind: 'garbage' | 'cut headers' | 'cut body'; bytes: Buffer; name: string } | undefined;
  halfClose: boolean;
}

interface Outcome {
  responses: RawResponse[];
  rest: Buffer;
  closed: boolean;
  error: string | undefined;
}

function completeRequests(rng: Random, token: string, stableId: string, deletableIds: string[]): Array<() => CompleteRequest> {
  const auth: Array<[string, string]> = [['Authorization', token]];
  const json: Array<[string, string]> = [['Authorization', token], ['Content-Type', 'application/json']];
  const deletable = () => rng.pick(deletableIds);
  const none: Effect = { kind: 'none' };
  const junkJson = () => rng.pick(['{', '{"title":', 'null', '[]', '"x"', '{"title":"a","author":"b","year":"1999"}', '{"__proto__":{"x":1},"title":"a","author":"b","year":1}', '\u0000', '{"title":"","author":"b","year":1}', 'x'.repeat(rng.int(1, 3000))]);
  return [
    () => ({ name: 'GET /healthz', request: { method: 'GET', path: '/healthz' }, statuses: [200], effect: none }),
    () => ({ name: 'GET /readyz', request: { method: 'GET', path: '/readyz' }, statuses: [200], effect: none }),
    () => ({ name: 'GET /books', request: { method: 'GET', path: '/books', headers: auth }, statuses: [200], effect: none }),
    () => ({ name: 'GET /books without a token', request: { method: 'GET', path: '/books' }, statuses: [401], effect: none }),
    () => ({ name: 'GET /books, bad token', request: { method: 'GET', path: '/books', headers: [['Authorization', 'Bearer a.b.c']] }, statuses: [401], effect: none }),
    () => ({ name: 'POST /book', request: { method: 'POST', path: '/book', headers: json, body: BOOK }, statuses: [201], effect: { kind: 'create' } }),
    () => ({ name: 'POST /book chunked', request: { method: 'POST', path: '/book', headers: json, body: BOOK, chunked: true }, statuses: [201], effect: { kind: 'create' } }),
    () => ({ name: 'POST /book, Expect: 100-continue', request: { method: 'POST', path: '/book', headers: [...json, ['Expect', '100-continue']], body: BOOK }, statuses: [201], effect: { kind: 'create' } }),
    () => ({ name: 'POST /book, text/plain', request: { method: 'POST', path: '/book', headers: [['Authorization', token], ['Content-Type', 'text/plain']], body: BOOK }, statuses: [201], effect: { kind: 'create' } }),
    () => ({ name: 'POST /book, bad body', request: { method: 'POST', path: '/book', headers: json, body: junkJson() }, statuses: [400], effect: none }),
    () => ({ name: 'POST /book without a token', request: { method: 'POST', path: '/book', body: BOOK }, statuses: [401], effect: none }),
    () => ({ name: 'POST /book, 1.5 MB', request: { method: 'POST', path: '/book', headers: json, body: Buffer.alloc(1_500_000, 'x') }, statuses: [413], effect: none, alone: true }),
    () => ({ name: 'GET /book/:id', request: { method: 'GET', path: `/book/${stableId}`, headers: auth }, statuses: [200], effect: none }),
    () => ({ name: 'GET /book/:id (deletable)', request: { method: 'GET', path: `/book/${deletable()}`, headers: auth }, statuses: [200, 404], effect: none }),
    () => ({ name: 'GET /book/<not an id>', request: { method: 'GET', path: `/book/${rng.pick(['abc', '%zz', '0', '-1', '1e3', '99999999999999999999999', '%00', '..%2F..'])}`, headers: auth }, statuses: [404], effect: none }),
    () => ({ name: 'PUT /book/:id', request: { method: 'PUT', path: `/book/${stableId}`, headers: json, body: '{"year":2001}' }, statuses: [200], effect: none }),
    () => ({ name: 'PUT /book/:id, bad body', request: { method: 'PUT', path: `/book/${stableId}`, headers: json, body: junkJson() }, statuses: [400], effect: none }),
    () => ({ name: 'PUT /book/<missing>', request: { method: 'PUT', path: '/book/8000000000000000000', headers: json, body: '{"year":2001}' }, statuses: [404], effect: none }),
    () => {
      const id = deletable();
      return { name: 'DELETE /book/:id', request: { method: 'DELETE', path: `/book/${id}`, headers: auth }, statuses: [200, 404], effect: { kind: 'delete', id } };
    },
    () => ({ name: 'DELETE /book/<missing>', request: { method: 'DELETE', path: '/book/8000000000000000000', headers: auth }, statuses: [404], effect: none }),
    () => ({ name: 'POST /token', request: { method: 'POST', path: '/token', body: '{"username":"admin","password":"password"}' }, statuses: [200], effect: none }),
    () => ({ name: 'POST /token, wrong password', request: { method: 'POST', path: '/token', body: '{"username":"admin","password":"nope"}' }, statuses: [401], effect: none }),
    () => ({ name: 'POST /token, bad body', request: { method: 'POST', path: '/token', body: junkJson() }, statuses: [400], effect: none }),
    () => ({ name: 'GET /nowhere', request: { method: 'GET', path: `/${rng.pick(['nowhere', 'book', 'books/1', '%2e%2e/etc/passwd', 'a'.repeat(4000)])}` }, statuses: [404, 405], effect: none }),
    () => ({ name: 'PATCH /books', request: { method: rng.pick(['PATCH', 'DELETE', 'PUT']), path: '/books', headers: auth }, statuses: [405], effect: none }),
    () => ({ name: 'odd but parseable', request: { method: rng.pick(['GET', 'OPTIONS', 'TRACE']), path: rng.pick(['//books', '/books?x=1&y', '/book/', '*']), headers: auth }, effect: none }),
    () => ({ name: 'GET /healthz, 40 KB header', request: { method: 'GET', path: '/healthz', headers: [['X-Pad', 'p'.repeat(40_000)]] }, statuses: [200], effect: none }),
    () => ({ name: 'HTTP/1.0 GET /healthz', request: { method: 'GET', path: '/healthz' }, raw: Buffer.from('GET /healthz HTTP/1.0\r\n\r\n'), statuses: [200], effect: none, alone: true }),
  ];
}

const GARBAGE = [
  'GARBAGE\r\n\r\n',
  'GET /books HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
  'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n',
  'GET /a b c HTTP/1.1\r\nHost: x\r\n\r\n',
  'GET /healthz HTTP/1.1\r\nHost: x\r\nX-Nul: a\u0000b\r\n\r\n',
  'POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n',
  'POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
  'POST /book HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc',
  'POST /token HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n',
  '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003', // a TLS ClientHello
  '\u00ff\u00fe\u0000\u0001binary\r\n\r\n',
];

function conversation(rng: Random, templates: Array<() => CompleteRequest>, token: string): Conversation {
  const roll = rng.int(1, 100);
  const count = roll <= 55 ? 1 : roll <= 75 ? rng.int(2, 5) : rng.int(0, 2);
  const tailKind = roll <= 75 ? undefined : roll <= 85 ? 'garbage' : rng.pick(['cut headers', 'cut body'] as const);
  const complete: CompleteRequest[] = [];
  for (let i = 0; i < count; i++) {
    const next = rng.pick(templates)();
    if (next.alone && (i < count - 1 || tailKind !== undefined)) continue;
    complete.push(next);
  }
  // Keep-alive between pipelined requests; the last one may ask for the close.
  complete.forEach((entry, index) => {
    const last = index === complete.length - 1 && tailKind === undefined;
    entry.request.headers = [...(entry.request.headers ?? []), ['Connection', last && rng.chance(0.5) ? 'close' : 'keep-alive']];
  });
  let tail: Conversation['tail'];
  if (tailKind === 'garbage') {
    const bytes = rng.pick(GARBAGE);
    tail = { kind: 'garbage', bytes: Buffer.from(bytes, 'latin1'), name: JSON.stringify(bytes.slice(0, 30)) };
  } else if (tailKind === 'cut headers') {
    const whole = requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', token], ['Connection', 'keep-alive']] });
    const headEnd = whole.indexOf('\r\n\r\n');
    tail = { kind: 'cut headers', bytes: whole.subarray(0, rng.int(1, headEnd + 2)), name: 'GET /books cut in its headers' };
  } else if (tailKind === 'cut body') {
    const chunked = rng.chance(0.3);
    const withToken = rng.chance(0.8);
    const whole = requestBytes({
      method: rng.pick(['POST', 'POST', 'PUT']) === 'PUT' ? 'PUT' : 'POST',
      path: '/book',
      headers: withToken ? [['Authorization', token], ['Connection', 'keep-alive']] : [['Connection', 'keep-alive']],
      body: BOOK,
      chunked,
    });
    const bodyStart = whole.indexOf('\r\n\r\n') + 4;
    // At least the headers, at most one byte short of the whole request.
    tail = { kind: 'cut body', bytes: whole.subarray(0, rng.int(bodyStart, whole.length - 1)), name: `${chunked ? 'chunked ' : ''}POST /book cut in its body${withToken ? '' : ', no token'}` };
  }
  // Cut-off requests are always followed by the FIN (otherwise the server waits for the rest).
  const halfClose = tail?.kind === 'cut headers' || tail?.kind === 'cut body' || rng.chance(0.6);
  return { complete, tail, halfClose };
}

/** Sends a conversation's bytes (then the FIN, if it half-closes) and reads what comes back. */
function converse(port: number, conv: Conversation, expectClose: boolean): Promise<Outcome> {
  const bytes = Buffer.concat([...conv.complete.map((entry) => entry.raw ?? requestBytes(entry.request)), conv.tail?.bytes ?? Buffer.alloc(0)]);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponses(Buffer.concat(chunks), { closed }), closed, error });
    };
    const timer = setTimeout(() => finish(false), 5_000);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // A kept-alive connection: done once every answer is in (the client closes it).
      if (!expectClose && parseResponses(Buffer.concat(chunks), { closed: false }).responses.length >= conv.complete.length) finish(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
    socket.once('end', () => finish(true));
    socket.once('close', () => finish(true));
    socket.once('connect', () => (conv.halfClose ? socket.end(bytes) : socket.write(bytes)));
  });
}

/** Why the outcome breaks the rules (see the top of the file), or undefined. */
function violation(conv: Conversation, outcome: Outcome, expectClose: boolean): string | undefined {
  const { responses } = outcome;
  // An answer with `Connection: close` (a 413, a body that is not JSON) is the last one: the
  // requests pipelined behind it are not read, and the client knows to resend them (RFC 9112 §9.6).
  const lastAnswer = responses.findIndex((response) => /\bclose\b/i.test(response.headers.connection ?? ''));
  const expected = lastAnswer >= 0 ? Math.min(conv.complete.length, lastAnswer + 1) : conv.complete.length;
  if (responses.length < expected) return `${expected - responses.length} of ${expected} complete requests unanswered`;
  for (const [index, entry] of conv.complete.slice(0, expected).entries()) {
    const status = responses[index]?.status as number;
    if (entry.statuses !== undefined && !entry.statuses.includes(status)) return `${entry.name}: ${status}, expected ${entry.statuses.join('/')}`;
  }
  if (expected < conv.complete.length) {
    return responses.length > expected ? `answers after a Connection: close answer` : outcome.rest.length > 0 ? 'a cut-off answer' : undefined;
  }
  const extra = responses.slice(expected);
  if (extra.length > 0 && conv.tail === undefined) return `${extra.length} answers more than requests`;
  if (extra.length > 1) return `${extra.length} answers to the bytes after the complete requests`;
  if (extra[0] !== undefined && (extra[0].status < 400 || extra[0].status > 499)) return `answer ${extra[0].status} to ${conv.tail?.name}, expected a 4xx or none`;
  if (outcome.rest.length > 0) return `a cut-off answer (${outcome.rest.length} bytes: ${JSON.stringify(outcome.rest.subarray(0, 60).toString('latin1'))})`;
  if (expectClose && !outcome.closed) return 'the server did not close the connection within 5 s';
  return undefined;
}

async function bookIds(client: ApiClient, token: string): Promise<Set<string>> {
  const response = await client.request('GET', '/books', { token });
  expect(response.status).toBe(200);
  return new Set([...response.text.matchAll(/"id":(\d+)/g)].map((match) => match[1] as string));
}

const partsItNeeds = machinery.pipelineInOrder && machinery.answerHalfClosedClients && machinery.finishAnswersOnClientError;
// Its rules are what pipeline-in-order, answer-half-closed-clients and finish-answers-on-client-error
// make true: skipped when NODE_HTTP_PARTS turns any of them off.
describe.skipIf(!partsItNeeds)('hostile connections (SQLite)', () => {
  // No failed-login limit: wrong passwords are part of the mix, and must keep answering 401.
  const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
  let port: number;
  let token: string;
  let stableId: string;
  const deletableIds: string[] = [];

  beforeAll(async () => {
    port = portOf(service.current.baseUrl);
    token = await service.client.token();
    stableId = String((await service.client.createBook(token, { title: 'Stable', author: 'S', year: 1 })).id);
    for (let i = 0; i < DELETABLE_BOOKS; i++) deletableIds.push(String((await service.client.createBook(token, { title: `Deletable ${i}`, author: 'D', year: i }).then((book) => book.id))));
  });

  it(`${REQUESTS} requests, ${CONCURRENCY} connections at a time: every complete request answered, every close clean, a book stored iff a 201 said so (seed ${SEED})`, async () => {
    const rng = random(SEED);
    const templates = completeRequests(rng, token, stableId, deletableIds);
    const conversations: Conversation[] = [];
    for (let requests = 0; requests < REQUESTS; ) {
      const conv = conversation(rng, templates, token);
      if (conv.complete.length === 0 && conv.tail === undefined) continue;
      conversations.push(conv);
      requests += conv.complete.length + (conv.tail === undefined ? 0 : 1);
    }
    const before = await bookIds(service.client, token);

    const failures: string[] = [];
    const created: string[] = [];
    const deleted = new Set<string>();
    const tally = { halfClosed: 0, pipelined: 0, garbage: 0, cut: 0, unansweredTails: 0 };
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < conversations.length) {
          const conv = conversations[next++] as Conversation;
          const lastAsksClose = conv.complete.at(-1)?.request.headers?.some(([name, value]) => name === 'Connection' && value === 'close') ?? false;
          const http10 = conv.complete.some((entry) => entry.raw !== undefined);
          const expectClose = conv.halfClose || conv.tail !== undefined || lastAsksClose || http10;
          const outcome = await converse(port, conv, expectClose);
          const problem = violation(conv, outcome, expectClose);
          if (problem !== undefined) {
            const sent = [...conv.complete.map((entry) => entry.name), ...(conv.tail ? [`${conv.tail.kind}: ${conv.tail.name}`] : [])].join(' + ');
            failures.push(`${problem} | sent ${sent}${conv.halfClose ? ', then FIN' : ''} | got ${JSON.stringify(outcome.responses.map((response) => response.status))}, closed ${outcome.closed}, error ${outcome.error ?? 'none'}`);
          }
          for (const [index, response] of outcome.responses.entries()) {
            if (response.status === 201) created.push(/"id":(\d+)/.exec(response.body)?.[1] ?? 'no id');
            const effect = conv.complete[index]?.effect;
            if (effect?.kind === 'delete' && response.status === 200) deleted.add(effect.id);
          }
          if (conv.halfClose) tally.halfClosed += 1;
          if (conv.complete.length > 1) tally.pipelined += 1;
          if (conv.tail?.kind === 'garbage') tally.garbage += 1;
          if (conv.tail !== undefined && conv.tail.kind !== 'garbage') tally.cut += 1;
          if (conv.tail !== undefined && outcome.responses.length === conv.complete.length) tally.unansweredTails += 1;
        }
      }),
    );
    const elapsedMs = Date.now() - started;

    const after = await bookIds(service.client, token);
    const expectedAfter = new Set([...before].filter((id) => !deleted.has(id)));
    for (const id of created) expectedAfter.add(id);
    const storedWithout201 = [...after].filter((id) => !expectedAfter.has(id));
    const missing = [...expectedAfter].filter((id) => !after.has(id));

    const summary = `${conversations.length} connections in ${elapsedMs} ms (${JSON.stringify(tally)}), ${created.length} created, ${deleted.size} deleted`;
    console.log(`hostile run, seed ${SEED}: ${summary}: ${failures.length} connections broke the rules, ${storedWithout201.length} books stored without a 201, ${missing.length} missing`);
    expect(failures.slice(0, 25), `${failures.length} of ${conversations.length} connections broke the rules (seed ${SEED}; ${summary})`).toEqual([]);
    expect(storedWithout201, 'books stored without a 201').toEqual([]);
    expect(missing, 'books acknowledged (201) but not stored, or deleted without a 200').toEqual([]);
    expect(new Set(created).size, 'the same id acknowledged twice').toBe(created.length);
  }, 60_000);
});
