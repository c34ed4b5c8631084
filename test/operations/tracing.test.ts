// Traces (docs/operations.md "Traces"): with OTEL_EXPORTER_OTLP_ENDPOINT set, the service
// exports a trace per request to a real OTLP/HTTP receiver (test/helpers/infra/otlp-receiver.ts):
// the caller's traceparent continued, a server span named after the route with its status, the
// store's queries as its children on every store, each request's trace showing the query that
// served it when requests that arrive together share one, the Redis login-limit calls, the trace
// id in the log line, no secret in any span, one trace across two instances; an unreachable or
// stalled collector never holds a request up and the spans it costs are counted in /metrics;
// a stop exports the spans still queued.
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeStream } from '../helpers/client/change-stream.js';
import { ApiClient, type ApiResponse } from '../helpers/client/api-client.js';
import { parseResponses, portOf, rawExchange, requestBytes, sendTogether } from '../helpers/client/raw-http.js';
import { freePort } from '../helpers/infra/free-port.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/infra/otlp-receiver.js';
import { createPrivateRedis, type PrivateRedis } from '../helpers/infra/redis-server.js';
import { fastPaths, machinery } from '../helpers/node-http.js';
import { describeIf } from '../helpers/requirements.js';
import { killAllChildServices, startService, type InProcessService } from '../helpers/service/start-service.js';
import type { StoreKind } from '../helpers/stores/dialects.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { withMysqlAdmin } from '../helpers/stores/test-store.js';

const SERVER = 2;
const CLIENT = 3;

/** Credentials of the services started here, unlike any other text a span could hold. */
const USERNAME = `user-${randomUUID()}`;
const PASSWORD = `password-${randomUUID()}`;
const SECRET = `secret-${randomUUID()}-${randomUUID()}`;
const ACCOUNT = { AUTH_USERNAME: USERNAME, AUTH_PASSWORD: PASSWORD, SECRET_TOKEN: SECRET };
/** PostgreSQL's test server trusts local connections, so a password in DB_URL is sent nowhere, but must never be exported either. */
const DB_PASSWORD = `db-password-${randomUUID()}`;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await killAllChildServices();
  await receiver?.close();
});

/** Tracing on, exported to `endpoint` as OTLP/JSON a few milliseconds after a span ends. */
function tracingTo(endpoint: string, more: Record<string, string> = {}): Record<string, string> {
  return { ...ACCOUNT, OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', ...more };
}

/** A caller's span: a fresh trace id and span id, and the traceparent header that names them. */
function callerSpan() {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

async function login(client: ApiClient, headers: Record<string, string> = {}, password = PASSWORD): Promise<ApiResponse> {
  return client.request('POST', '/token', { body: { username: USERNAME, password }, headers });
}

async function tokenFor(client: ApiClient): Promise<string> {
  const response = await login(client);
  expect(response.status).toBe(200);
  return (response.body.data as { token: string }).token;
}

/** Waits until the trace holds its server span and `clientSpans` spans under it; the trace's spans. */
function traceWith(traceId: string, clientSpans: number): Promise<ReceivedSpan[]> {
  return receiver.waitFor((spans) => {
    const trace = spans.filter((span) => span.traceId === traceId);
    const server = trace.filter((span) => span.kind === SERVER);
    return server.length === 1 && trace.filter((span) => span.kind === CLIENT).length >= clientSpans && trace;
  });
}

function serverSpanOf(trace: ReceivedSpan[]): ReceivedSpan {
  const server = trace.filter((span) => span.kind === SERVER);
  expect(server).toHaveLength(1);
  return server[0]!;
}

function childrenOf(trace: ReceivedSpan[], parent: ReceivedSpan): ReceivedSpan[] {
  return trace.filter((span) => span.parentSpanId === parent.spanId);
}

/** The request's log line (LOG_LEVEL=info) whose trace id is this one. */
function logLineOf(service: InProcessService, traceId: string): Record<string, unknown> | undefined {
  return service.logs
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.msg === 'request completed' && line.trace_id === traceId);
}

/**
 * The copies of each shared query among `spans`: a copy that links to another is grouped with
 * it (work-spans.ts: every copy but the first links to the first).
 */
function sharedQueries(spans: ReceivedSpan[]): ReceivedSpan[][] {
  const groups = new Map<string, ReceivedSpan[]>();
  for (const span of spans.filter((candidate) => candidate.attributes['book.shared_query.size'] !== undefined)) {
    const first = span.links[0]?.spanId ?? span.spanId;
    groups.set(first, [...(groups.get(first) ?? []), span]);
  }
  return [...groups.values()];
}

/** db.system.name of the database a test store of this kind is on. */
async function databaseSystem(kind: StoreKind): Promise<string> {
  if (kind === 'sqlite') return 'sqlite';
  if (kind === 'postgres') return 'postgresql';
  const version = await withMysqlAdmin(async (connection) => {
    const [rows] = await connection.query('select version() as version');
    return String((rows as Array<{ version: string }>)[0]!.version);
  });
  return /MariaDB/i.test(version) ? 'mariadb' : 'mysql';
}

forEachStore((kind) => {
  describe('traces of requests', () => {
    let service: InProcessService;
    let client: ApiClient;
    let token: string;
    let system: string;
    /** Book fields sent by these tests: no span may hold them. */
    const title = `Title ${randomUUID()}`;
    const author = `Author ${randomUUID()}`;

    beforeAll(async () => {
      service = await startService({
        kind,
        env: tracingTo(receiver.endpoint),
        dbUrlFrom: kind === 'postgres' ? (url) => url.replace(/^postgres:\/\/([^:@/]+)@/, `postgres://$1:${DB_PASSWORD}@`) : undefined,
      });
      client = new ApiClient(service.baseUrl);
      token = await tokenFor(client);
      system = await databaseSystem(kind);
    });
    afterAll(async () => {
      await service?.stop();
    });

    it('GET /books/changes: the stream\'s server span is exported when the stream starts, not held open while it lasts', async () => {
      const caller = callerSpan();
      const stream = await ChangeStream.follow(service.baseUrl, { token, headers: { traceparent: caller.traceparent } });
      try {
        const trace = await traceWith(caller.traceId, 1);
        const server = serverSpanOf(trace);
        expect(server.name).toBe('GET /books/changes');
        expect(server.attributes['http.response.status_code']).toBe(200);
        expect(server.attributes['error.type']).toBeUndefined();
        expect(stream.state).toBe('open');
      } finally {
        stream.close();
      }
    });

    it("a request with a traceparent: the server span continues the caller's trace, the store's query is its child; route, status, database and node as attributes; the log line names both", async () => {
      const book = await client.createBook(token, { title, author, year: 1965 });
      const caller = callerSpan();

      const response = await client.request('GET', `/book/${book.id}`, { token, headers: { traceparent: caller.traceparent } });
      expect(response.status).toBe(200);

      const trace = await traceWith(caller.traceId, 1);
      const server = serverSpanOf(trace);
      expect(server.name).toBe('GET /book/:id');
      expect(server.parentSpanId).toBe(caller.spanId);
      expect(server.attributes).toMatchObject({
        'http.request.method': 'GET',
        'http.route': '/book/:id',
        'http.response.status_code': 200,
        'url.scheme': 'http',
        'client.address': '127.0.0.1',
      });
      expect(server.statusCode).not.toBe(2);
      const queries = childrenOf(trace, server);
      expect(queries.map((span) => span.name)).toEqual(['SELECT books']);
      expect(queries[0]!.kind).toBe(CLIENT);
      expect(queries[0]!.attributes).toMatchObject({
        'db.system.name': system,
        'db.system': system,
        'db.operation.name': 'SELECT',
        'db.collection.name': 'books',
      });
      if (kind === 'sqlite') {
        expect(queries[0]!.attributes['server.address']).toBeUndefined();
      } else {
        const node = new URL(service.testStore.url);
        expect(queries[0]!.attributes).toMatchObject({ 'server.address': node.hostname, 'server.port': Number(node.port || (kind === 'postgres' ? 5432 : 3306)) });
      }
      expect(server.resource).toMatchObject({ 'service.name': 'book-collection', 'service.version': expect.any(String), 'host.name': expect.any(String) });

      expect(logLineOf(service, caller.traceId)).toMatchObject({ route: '/book/:id', status: 200, trace_id: caller.traceId, span_id: server.spanId });
    });

    it('a request without a traceparent starts a trace of its own; a 404 without a route is named after its method alone, and is no error', async () => {
      const response = await client.request('GET', '/no/such/route', { token });
      expect(response.status).toBe(404);
      const line = await waitForLogLine(service, (candidate) => candidate.url === '/no/such/route');
      const trace = await traceWith(line.trace_id as string, 0);
      const server = serverSpanOf(trace);
      expect(server.parentSpanId).toBe('');
      expect(server.name).toBe('GET');
      expect(server.attributes['http.route']).toBeUndefined();
      expect(server.attributes['http.response.status_code']).toBe(404);
      expect(server.statusCode).toBe(0);
    });

    it("a body that arrives after its headers: the request's query is still in its trace (the body is read in the request's context)", async () => {
      const caller = callerSpan();
      const body = JSON.stringify({ title: `${title} late`, author, year: 2001 });
      const head = requestBytes({
        method: 'POST',
        path: '/book',
        headers: [['Authorization', token], ['traceparent', caller.traceparent], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)]],
      });
      const exchange = await rawExchange(portOf(service.baseUrl), async (socket) => {
        socket.write(head);
        await new Promise((resolve) => setTimeout(resolve, 150));
        socket.write(body);
      });
      expect(exchange.response?.status).toBe(201);
      const trace = await traceWith(caller.traceId, 1);
      expect(childrenOf(trace, serverSpanOf(trace)).map((span) => span.name)).toEqual(['INSERT books']);
    });

    // Shared queries need requests that arrive in one turn (the speed path answer-in-turns):
    // skipped in the run with FAST_PATHS=off (CI's second leg), where no query is shared.
    it.runIf(fastPaths.has('answer-in-turns'))(
      "requests that arrive together: each request's trace shows the query that served it, a shared one in every trace it served",
      async () => {
        const books = await Promise.all(Array.from({ length: 5 }, (_, i) => client.createBook(token, { title: `${title} ${i}`, author, year: 2000 + i })));
        const reads = Array.from({ length: 20 }, (_, i) => ({ caller: callerSpan(), id: books[i % books.length]!.id }));
        const writes = Array.from({ length: 20 }, (_, i) => ({ caller: callerSpan(), fields: { title: `${title} new ${i}`, author, year: 1900 + i } }));
        const lists = Array.from({ length: 10 }, () => ({ caller: callerSpan() }));

        const answers = [
          ...(await sendTogether(
            service.baseUrl,
            reads.map(({ caller, id }) => ({ method: 'GET', path: `/book/${id}`, headers: [['Authorization', token], ['traceparent', caller.traceparent]] })),
          )),
          ...(await sendTogether(
            service.baseUrl,
            writes.map(({ caller, fields }) => ({
              method: 'POST',
              path: '/book',
              headers: [['Authorization', token], ['traceparent', caller.traceparent], ['Content-Type', 'application/json']],
              body: JSON.stringify(fields),
            })),
          )),
          ...(await sendTogether(
            service.baseUrl,
            lists.map(({ caller }) => ({ method: 'GET', path: '/books', headers: [['Authorization', token], ['traceparent', caller.traceparent]] })),
          )),
        ];
        expect(answers.map((exchange) => exchange.response?.status)).toEqual([...reads.map(() => 200), ...writes.map(() => 201), ...lists.map(() => 200)]);

        const served: ReceivedSpan[] = [];
        for (const [requests, route, query] of [
          [reads, 'GET /book/:id', 'SELECT books'],
          [writes, 'POST /book', 'INSERT books'],
          [lists, 'GET /books', 'SELECT books'],
        ] as const) {
          for (const { caller } of requests) {
            const trace = await traceWith(caller.traceId, 1);
            const server = serverSpanOf(trace);
            expect(server.name).toBe(route);
            expect(server.parentSpanId).toBe(caller.spanId);
            // The query that served this request, in this request's own trace, under its span.
            // A list reads the change feed's cursor first (Changes-Cursor): one read shared by the
            // lists of the turn, in each of their traces (with, after writes, the sequencer's queries).
            const [cursorReads, queries] = partitionByChangeFeed(childrenOf(trace, server));
            expect(queries.map((span) => span.name), `${route} ${caller.traceId}`).toEqual([query]);
            expect(cursorReads.length > 0, `${route} ${caller.traceId}: the Changes-Cursor read`).toBe(route === 'GET /books');
            served.push(queries[0]!);
          }
        }

        // A query that served several requests: one copy in each of their traces, each saying
        // how many it served, each but the first linked to the first.
        const shared = sharedQueries(served);
        const ourTraces = new Set(served.map((span) => span.traceId));
        for (const copies of shared) {
          const size = copies[0]!.attributes['book.shared_query.size'] as number;
          expect(size).toBeGreaterThan(1);
          expect(copies).toHaveLength(size);
          expect(new Set(copies.map((span) => span.traceId)).size).toBe(size);
          for (const copy of copies) {
            expect(ourTraces.has(copy.traceId)).toBe(true);
            expect(copy.attributes['book.shared_query.size']).toBe(size);
            expect(copy.name).toBe(copies[0]!.name);
          }
          expect(copies.filter((copy) => copy.links.length === 0)).toHaveLength(1);
        }
        // The lists share one query on every store; reads and creates on the stores that batch
        // them, with the speed path batched-queries on.
        const sharedNames = (served: ReceivedSpan[]) => new Set(sharedQueries(served).map((copies) => copies[0]!.name));
        const lists_ = served.slice(reads.length + writes.length);
        expect(sharedNames(lists_)).toEqual(new Set(['SELECT books']));
        const batched = fastPaths.has('batched-queries');
        if (batched && kind !== 'sqlite') expect(sharedNames(served.slice(0, reads.length))).toEqual(new Set(['SELECT books']));
        if (batched && (kind === 'postgres' || system === 'mariadb')) {
          expect(sharedNames(served.slice(reads.length, reads.length + writes.length))).toEqual(new Set(['INSERT books']));
        }
      },
    );

    it('no span holds a credential, the token, the signing secret, the Authorization header, the database password, a book value or a raw path with an id', async () => {
      // A failed login and a login, so that POST /token's spans are among those scanned.
      expect((await login(client, {}, `wrong-${PASSWORD}`)).status).toBe(401);
      const fresh = await tokenFor(client);
      const book = await client.createBook(fresh, { title, author, year: 1999 });
      expect((await client.request('PUT', `/book/${book.id}`, { token: `Bearer ${fresh}`, body: { title: `${title} changed` } })).status).toBe(200);
      const caller = callerSpan();
      expect((await client.request('DELETE', `/book/${book.id}`, { token: fresh, headers: { traceparent: caller.traceparent } })).status).toBe(200);
      await traceWith(caller.traceId, 1);
      // A create with an Idempotency-Key: its key claimed, then its book and its answer written.
      const idempotencyKey = `key-${randomUUID()}`;
      const keyed = callerSpan();
      const created = await client.request('POST', '/book', {
        token: fresh,
        body: { title, author, year: 2024 },
        headers: { traceparent: keyed.traceparent, 'idempotency-key': idempotencyKey },
      });
      expect(created.status).toBe(201);
      const keyedTrace = await traceWith(keyed.traceId, 2);
      const names = keyedTrace.filter((span) => span.kind === CLIENT).map((span) => span.name);
      expect(names).toContain('INSERT idempotency_keys');
      expect(names).toContain('INSERT books');
      // Every one of them under the request's span (directly, or in a transaction under it).
      const inTrace = new Set(keyedTrace.map((span) => span.spanId));
      for (const span of keyedTrace) if (span.kind === CLIENT) expect(inTrace.has(span.parentSpanId), span.name).toBe(true);

      const spans = receiver.spans().filter((span) => span.resource['process.pid'] === process.pid);
      expect(spans.filter((span) => span.name === 'POST /token').length).toBeGreaterThanOrEqual(2);
      const secrets = [USERNAME, PASSWORD, SECRET, token, fresh, DB_PASSWORD, title, author, 'Bearer', idempotencyKey];
      for (const span of spans) {
        for (const secret of secrets) expect(span.text, `span ${span.name}`).not.toContain(secret);
        expect(span.text, `span ${span.name}`).not.toMatch(/\/book\/\d/);
      }
    });
  });
});

/** Polls the service's log until a request line matches; the line. */
async function waitForLogLine(service: InProcessService, matches: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  for (let tries = 0; tries < 200; tries += 1) {
    const line = service.logs
      .flatMap((chunk) => chunk.split('\n'))
      .filter((text) => text.startsWith('{'))
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((candidate) => candidate.msg === 'request completed' && matches(candidate));
    if (line) return line;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('no such log line');
}

// Pipelined requests run one after the other (NODE_HTTP_PARTS' pipeline-in-order): the second one
// starts from the first one's finished answer, while the first one's span is still open when
// requests are not answered in turns (this service keeps pipelineInOrder alone on). It must not
// run in the first one's trace.
// Skipped in the run with NODE_HTTP_PARTS=off (CI's second leg): no pipeline order to test there.
describe.skipIf(!machinery.pipelineInOrder)('a pipelined request behind a sampled one', () => {
  let service: InProcessService;
  let client: ApiClient;

  beforeAll(async () => {
    service = await startService({ kind: 'sqlite', env: tracingTo(receiver.endpoint, { FAST_PATHS: '-answer-in-turns', NODE_HTTP_PARTS: 'pipeline-in-order' }) });
    client = new ApiClient(service.baseUrl);
  });
  afterAll(async () => {
    await service?.stop();
  });

  it("its trace not sampled: none of its spans lands in the other request's trace", async () => {
    const token = await tokenFor(client);
    const book = await client.createBook(token, { title: 'Piped', author: 'A', year: 1 });
    const sampled = callerSpan();
    const unsampled = callerSpan();
    const bytes = Buffer.concat([
      requestBytes({ method: 'GET', path: `/book/${book.id}`, headers: [['Connection', 'keep-alive'], ['Authorization', token], ['traceparent', sampled.traceparent]] }),
      requestBytes({ method: 'GET', path: `/book/${book.id}`, headers: [['Authorization', token], ['traceparent', `00-${unsampled.traceId}-${unsampled.spanId}-00`]] }),
    ]);
    const exchange = await rawExchange(portOf(service.baseUrl), (socket) => void socket.write(bytes), { untilClose: true });
    expect(parseResponses(exchange.received).responses.map((response) => response.status)).toEqual([200, 200]);
    await traceWith(sampled.traceId, 1);
    await new Promise((resolve) => setTimeout(resolve, 200)); // anything more would have arrived by now
    const trace = receiver.spans().filter((span) => span.traceId === sampled.traceId);
    expect(trace.map((span) => span.name).sort()).toEqual(['GET /book/:id', 'SELECT books']);
    expect(receiver.spans().filter((span) => span.traceId === unsampled.traceId)).toEqual([]);
  });
});

// Skipped (with the reason printed) where redis-server is missing; under CI=true it fails instead.
describeIf('redis-server')('traces of logins decided in Redis (LOGIN_LIMIT_STORE)', () => {
  let redis: PrivateRedis;
  let service: InProcessService;
  let client: ApiClient;

  beforeAll(async () => {
    redis = await createPrivateRedis();
    service = await startService({ kind: 'sqlite', env: tracingTo(receiver.endpoint, { LOGIN_LIMIT_STORE: redis.url, LOGIN_RATE_LIMIT: '5' }) });
    client = new ApiClient(service.baseUrl);
  });
  afterAll(async () => {
    await service?.stop();
    await redis?.stop();
  });

  it("a failed login: its count in Redis is a span of the login's trace; a correct one: its checks are", async () => {
    const redisPort = Number(new URL(redis.url).port);
    const failed = callerSpan();
    expect((await login(client, { traceparent: failed.traceparent }, `wrong-${PASSWORD}`)).status).toBe(401);
    const failedTrace = await traceWith(failed.traceId, 2);
    const failedServer = serverSpanOf(failedTrace);
    expect(failedServer.name).toBe('POST /token');
    expect(failedServer.attributes['http.response.status_code']).toBe(401);
    const failedCalls = childrenOf(failedTrace, failedServer);
    // The check before the body is read, then the failure counted.
    expect(failedCalls.map((span) => span.name)).toEqual(['GET', 'EVALSHA']);
    for (const call of failedCalls) {
      expect(call.attributes).toMatchObject({ 'db.system.name': 'redis', 'server.address': '127.0.0.1', 'server.port': redisPort, 'db.operation.name': call.name });
    }

    const correct = callerSpan();
    expect((await login(client, { traceparent: correct.traceparent })).status).toBe(200);
    const correctTrace = await traceWith(correct.traceId, 2);
    expect(childrenOf(correctTrace, serverSpanOf(correctTrace)).map((span) => span.name)).toEqual(['GET', 'GET']);

    for (const span of [...failedTrace, ...correctTrace]) {
      for (const secret of [USERNAME, PASSWORD, 'failed-logins']) expect(span.text).not.toContain(secret);
    }
  });
});

describe('one trace across two instances', () => {
  let first: InProcessService;
  let second: InProcessService;

  beforeAll(async () => {
    [first, second] = await Promise.all([startService({ kind: 'sqlite', env: tracingTo(receiver.endpoint) }), startService({ kind: 'sqlite', env: tracingTo(receiver.endpoint) })]);
  });
  afterAll(async () => {
    await Promise.all([first?.stop(), second?.stop()]);
  });

  it("a request to one instance, whose span is then the caller of a request to the other: one trace, each server span the other's parent or child", async () => {
    const caller = callerSpan();
    const firstClient = new ApiClient(first.baseUrl);
    expect((await login(firstClient, { traceparent: caller.traceparent })).status).toBe(200);
    // What a service calling the second instance on the first's behalf would send: the first's span as the parent.
    const firstSpanId = (await waitForLogLine(first, (line) => line.trace_id === caller.traceId)).span_id as string;
    const onward = `00-${caller.traceId}-${firstSpanId}-01`;
    const secondClient = new ApiClient(second.baseUrl);
    const token = await tokenFor(secondClient);
    expect((await secondClient.request('GET', '/books', { token, headers: { traceparent: onward } })).status).toBe(200);

    const trace = await receiver.waitFor((spans) => {
      const found = spans.filter((span) => span.traceId === caller.traceId && span.kind === SERVER);
      return found.length === 2 && found;
    });
    const [onFirst, onSecond] = [trace.find((span) => span.name === 'POST /token')!, trace.find((span) => span.name === 'GET /books')!];
    expect(onFirst.parentSpanId).toBe(caller.spanId);
    expect(onSecond.parentSpanId).toBe(onFirst.spanId);
    // Two instances: the resource says which served each part.
    expect(onFirst.resource['service.instance.id']).not.toBe(onSecond.resource['service.instance.id']);
  });
});

describe('an unreachable or stalled collector', () => {
  /** otel_spans_dropped_total as /metrics says it now. */
  async function droppedSpans(baseUrl: string): Promise<number> {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const match = /^otel_spans_dropped_total (\d+)$/m.exec(text);
    if (!match) throw new Error('no otel_spans_dropped_total in /metrics');
    return Number(match[1]);
  }

  /** `count` reads, `concurrently` at a time, each answered correctly and well within the normal time. */
  async function readMany(client: ApiClient, token: string, id: number, count: number, concurrently = 10): Promise<void> {
    for (let sent = 0; sent < count; sent += concurrently) {
      const started = Date.now();
      const answers = await Promise.all(Array.from({ length: concurrently }, () => client.request('GET', `/book/${id}`, { token })));
      for (const answer of answers) expect(answer.body).toMatchObject({ status: 200, data: { id } });
      expect(Date.now() - started).toBeLessThan(5_000);
    }
  }

  it('a collector that refuses connections: every request answers as usual; the spans lost are counted', async () => {
    const closedPort = await freePort(); // nothing listens there
    const service = await startService({ kind: 'sqlite', env: tracingTo(`http://127.0.0.1:${closedPort}`, { OTEL_EXPORTER_OTLP_TIMEOUT: '2000' }) });
    try {
      const client = new ApiClient(service.baseUrl);
      const token = await tokenFor(client);
      const book = await client.createBook(token, { title: 'Unexported', author: 'A', year: 1 });
      expect(await droppedSpans(service.baseUrl)).toBe(0);
      await readMany(client, token, book.id, 100);
      // Each read ended two spans (the request's, its query's): every export of them fails.
      const deadline = Date.now() + 10_000;
      let dropped = 0;
      while ((dropped = await droppedSpans(service.baseUrl)) < 200 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(dropped).toBeGreaterThanOrEqual(200);
    } finally {
      await service.stop();
    }
  });

  it('a collector that accepts exports and never answers: every request answers as usual; once the queue is full, the spans refused are counted', async () => {
    const stalled = await startOtlpReceiver();
    stalled.stall(true);
    const queue = 16;
    const batch = 8;
    const service = await startService({
      kind: 'sqlite',
      env: tracingTo(stalled.endpoint, {
        OTEL_BSP_MAX_QUEUE_SIZE: String(queue),
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: String(batch),
        OTEL_EXPORTER_OTLP_TIMEOUT: '60000',
        OTEL_BSP_EXPORT_TIMEOUT: '60000',
      }),
    });
    try {
      const client = new ApiClient(service.baseUrl);
      const token = await tokenFor(client);
      const book = await client.createBook(token, { title: 'Stalled', author: 'A', year: 1 });
      await readMany(client, token, book.id, 60);
      // 1 + 2 + 60 × 2 spans ended; the export in flight holds a batch, the queue holds the rest
      // it can: everything else was refused, and is counted now, not when an export fails.
      const ended = 1 + 2 + 60 * 2;
      const dropped = await droppedSpans(service.baseUrl);
      expect(dropped).toBeGreaterThanOrEqual(ended - queue - batch);
      expect(dropped).toBeLessThanOrEqual(ended);
    } finally {
      await service.stop();
      await stalled.close();
    }
  });
});

/** A service in its own process that exports on schedule only every 10 minutes: whatever arrives, its stop sent it. */
async function serviceExportingOnlyAtStop() {
  const child = await startService({
    childProcess: true,
    dbUrl: 'sqlite::memory:',
    env: tracingTo(receiver.endpoint, { OTEL_BSP_SCHEDULE_DELAY: '600000' }),
  });
  const client = new ApiClient(child.baseUrl);
  return { child, client, token: await tokenFor(client) };
}

describe('a stop exports the spans still queued', () => {
  it('the spans of the last requests reach the collector after SIGTERM, before the process exits', async () => {
    const { child, client, token } = await serviceExportingOnlyAtStop();
    const callers = [callerSpan(), callerSpan(), callerSpan()];
    for (const caller of callers) expect((await client.request('GET', '/books', { token, headers: { traceparent: caller.traceparent } })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const ours = (spans: ReceivedSpan[]) => spans.filter((span) => callers.some((caller) => caller.traceId === span.traceId));
    expect(ours(receiver.spans())).toEqual([]);

    expect(await child.stop('SIGTERM')).toBe(0);

    const exported = ours(receiver.spans());
    for (const caller of callers) {
      expect(exported.filter((span) => span.traceId === caller.traceId).map((span) => span.name).filter((name) => !CHANGE_FEED_QUERY.test(name)).sort()).toEqual(['GET /books', 'SELECT books']);
    }
  });
});

describe('a stop with a request that never finishes', () => {
  it('its connection is cut 6 s after SIGTERM (DRAIN_MS), so the last spans keep their 3 s; exit 0 within the 10 s bound', async () => {
    const { child, client, token } = await serviceExportingOnlyAtStop();
    const caller = callerSpan();
    expect((await client.request('GET', '/books', { token, headers: { traceparent: caller.traceparent } })).status).toBe(200);
    // A write whose body stops arriving: its request stays in flight through the stop.
    const socket = connect(portOf(child.baseUrl), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.on('error', () => undefined);
    socket.write(`POST /book HTTP/1.1\r\nHost: x\r\nAuthorization: ${token}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"title":`);
    const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now())));
    await new Promise((resolve) => setTimeout(resolve, 200));

    const signalled = Date.now();
    const exitCode = child.stop('SIGTERM');
    const cutAfter = (await closed) - signalled;
    expect(await exitCode).toBe(0);
    const exitedAfter = Date.now() - signalled;
    expect(cutAfter, 'the stalled request is cut at DRAIN_MS').toBeGreaterThanOrEqual(5_500);
    expect(cutAfter, 'the stalled request is cut at DRAIN_MS').toBeLessThan(7_000);
    expect(exitedAfter, 'within the 10 s bound').toBeLessThan(10_000);
    expect(receiver.spans().filter((span) => span.traceId === caller.traceId).map((span) => span.name).filter((name) => !CHANGE_FEED_QUERY.test(name)).sort()).toEqual(['GET /books', 'SELECT books']);
  });
});

describe('OTLP over HTTP with protobuf, the default protocol', () => {
  it('spans are sent as application/x-protobuf, holding the trace id and the span names', async () => {
    const service = await startService({ kind: 'sqlite', env: { ...ACCOUNT, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '20' } });
    try {
      const caller = callerSpan();
      const client = new ApiClient(service.baseUrl);
      expect((await login(client, { traceparent: caller.traceparent })).status).toBe(200);
      const traceIdBytes = Buffer.from(caller.traceId, 'hex');
      const sent = await receiver.waitFor(() => receiver.exports().find((body) => body.body.includes(traceIdBytes)));
      expect(sent.contentType).toBe('application/x-protobuf');
      expect(sent.body.includes(Buffer.from('POST /token'))).toBe(true);
      expect(sent.body.includes(Buffer.from(PASSWORD))).toBe(false);
    } finally {
      await service.stop();
    }
  });
});

/** The queries of the change feed's tables: a list's Changes-Cursor read, and the sequencer's. */
const CHANGE_FEED_QUERY = /\bbook_(change|feed)/;

function partitionByChangeFeed(spans: ReceivedSpan[]): [ReceivedSpan[], ReceivedSpan[]] {
  return [spans.filter((span) => CHANGE_FEED_QUERY.test(span.name)), spans.filter((span) => !CHANGE_FEED_QUERY.test(span.name))];
}
