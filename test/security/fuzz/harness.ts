// What the fuzz suites (*.test.ts here) share: property-based robustness tests (fast-check)
// that throw generated requests at every endpoint, with a valid token or not, over bare
// sockets (no client-side normalisation). SQLite gets the full run, PostgreSQL a smaller one
// (FUZZ_SCALE multiplies every run count; FUZZ_SEED replays a run, and CI pins it).
//
// Invariants checked on every generated request:
//  - an answer arrives (no dropped connection), and it is the JSON envelope {status, message,
//    data} with status == HTTP status, never 5xx; an error has data null and a fixed message;
//  - a protected operation without a valid token is 401, and only a valid token ever gets a
//    2xx or a "Book not found" (authentication before anything else);
//  - the store changes only on a 2xx POST/PUT/DELETE, and then exactly as that operation says
//    (snapshot of GET /books before and after every write request);
//  - success data has exactly its keys (a book: id, title, author, year; a token: token), and
//    this process's Object/Array/Function prototypes are never polluted (the service under
//    test runs in this process).
// Here: the run sizes and seed, the service each suite fuzzes, sending a request and reading the
// store, the endpoints, and the checks of those invariants.
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Book } from '../../helpers/client/books.js';
import { expectBook, expectEnvelopeShape, expectSuccessData, type Envelope } from '../../helpers/client/envelope.js';
import { portOf, rawRequest, type RawRequest, type RawResponse } from '../../helpers/client/raw-http.js';
import { useService } from '../../helpers/service/start-service.js';
import type { StoreKind } from '../../helpers/stores/dialects.js';
import { forEachStore } from '../../helpers/stores/for-each-store.js';

const SCALE = Number(process.env.FUZZ_SCALE ?? '1');
/** SQLite gets the full run; PostgreSQL a fifth of it; MySQL is left to the contract suites. */
const STORE_SCALE: Partial<Record<StoreKind, number>> = { sqlite: 1, postgres: 0.2 };
const FUZZED_STORES = Object.keys(STORE_SCALE) as StoreKind[];
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
export const MISSING_ID = '8000000000000000000'; // within 64 bits, never generated in a test database
export const PROPERTY_TIMEOUT_MS = 180_000;

// The service under test runs in this process: a tripwire for prototype pollution of it.
const OBJECT_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();
const ARRAY_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Array.prototype).sort();
const FUNCTION_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Function.prototype).sort();

/** Object.prototype, Array.prototype and Function.prototype of this process are as they were at load. */
export function expectPrototypesUntouched(context = ''): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort(), `Object.prototype polluted ${context}`).toEqual(OBJECT_PROTOTYPE_KEYS);
  expect(Object.getOwnPropertyNames(Array.prototype).sort(), `Array.prototype polluted ${context}`).toEqual(ARRAY_PROTOTYPE_KEYS);
  expect(Object.getOwnPropertyNames(Function.prototype).sort(), `Function.prototype polluted ${context}`).toEqual(FUNCTION_PROTOTYPE_KEYS);
  const probe: Record<string, unknown> = {};
  for (const key of ['polluted', 'isAdmin', 'title', 'author', 'year', 'id', 'extra']) {
    expect(probe[key], `({}).${key} is inherited ${context}`).toBeUndefined();
  }
}

/**
 * fast-check's parameters for a property: `runs` cases on SQLite (scaled per store and by
 * FUZZ_SCALE), and FUZZ_SEED when set, which replays the same cases of each property.
 */
export function params<T>(runs: number, kind: StoreKind): fc.Parameters<T> {
  const numRuns = Math.max(10, Math.round(runs * SCALE * (STORE_SCALE[kind] ?? 0)));
  return SEED === undefined ? { numRuns } : { numRuns, seed: SEED };
}

/**
 * One property as one test: `check` holds for every generated case, `runs` of them scaled for
 * the store (FUZZ_SCALE), replayed exactly under FUZZ_SEED.
 */
export function itHolds<T>(title: string, cases: fc.Arbitrary<T>, check: (testCase: T) => Promise<unknown>, runs: number, kind: StoreKind): void {
  it(
    title,
    async () => {
      await fc.assert(
        fc.asyncProperty(cases, async (testCase) => {
          await check(testCase);
        }),
        params(runs, kind),
      );
    },
    PROPERTY_TIMEOUT_MS,
  );
}

// ---------------------------------------------------------------------------------------
// Talking to the service
// ---------------------------------------------------------------------------------------

export interface Fixture {
  port: number;
  token: string;
}

export interface Snapshot {
  text: string;
  books: Book[];
}

/** The answer to a request; a connection closed without one is a failure. */
export async function send(fixture: Fixture, request: RawRequest, context: string): Promise<RawResponse> {
  const exchange = await rawRequest(fixture.port, request, { timeoutMs: 15_000 });
  if (exchange.response === undefined) {
    throw new Error(
      `no complete response (server closed: ${exchange.closed}, client error: ${exchange.error ?? 'none'}, ` +
        `after ${exchange.elapsedMs} ms, ${exchange.received.length} bytes: ${JSON.stringify(exchange.received.toString('latin1').slice(0, 300))})\n${context}`,
    );
  }
  return exchange.response;
}

export async function snapshot(fixture: Fixture): Promise<Snapshot> {
  const response = await send(fixture, { method: 'GET', path: '/books', headers: [['Authorization', fixture.token]] }, 'snapshot GET /books');
  const envelope = expectEnvelopeShape(response, 'snapshot GET /books');
  expect(response.status).toBe(200);
  expectSuccessData(envelope, 'books', 'snapshot');
  return { text: response.body, books: envelope.data as Book[] };
}

/** Keeps a few books in the store so that PUT and DELETE have something to hit. */
export async function ensureBooks(fixture: Fixture, minimum = 3): Promise<Snapshot> {
  let current = await snapshot(fixture);
  while (current.books.length < minimum) {
    const body = JSON.stringify({ title: `Seed ${current.books.length}`, author: 'Fuzz', year: 1999 });
    const response = await send(fixture, { method: 'POST', path: '/book', headers: [['Authorization', fixture.token], ['Content-Type', 'application/json']], body }, 'seed');
    expect(response.status, response.body).toBe(201);
    current = await snapshot(fixture);
  }
  return current;
}

/** `-0` is stored and returned as 0. */
function sameYear(a: unknown, b: unknown): boolean {
  return typeof a === 'number' && typeof b === 'number' && a + 0 === b + 0;
}

export function describeRequest(request: RawRequest, extra: Record<string, unknown> = {}): string {
  const body = request.body === undefined ? undefined : Buffer.isBuffer(request.body) ? request.body : Buffer.from(request.body);
  return JSON.stringify(
    {
      request: `${request.method} ${request.path.length > 200 ? `${request.path.slice(0, 200)}…(${request.path.length})` : request.path}`,
      headers: (request.headers ?? []).map(([name, value]) => `${name}: ${typeof value === 'string' ? value.slice(0, 120) : `<bytes ${value.toString('hex')}>`}`),
      chunked: request.chunked ?? false,
      body: body === undefined ? undefined : body.length > 300 ? `${body.toString('utf8', 0, 300)}…(${body.length} bytes)` : body.toString('utf8'),
      bodyHex: body !== undefined && body.length <= 120 ? body.toString('hex') : undefined,
      ...extra,
    },
    null,
    1,
  );
}

/**
 * Checks a write's effect on the store: none unless 2xx; exactly the operation otherwise.
 * `operation` names what a 2xx means; `expected` is the book a create/update must produce.
 */
export function expectStoreEffect(
  before: Snapshot,
  after: Snapshot,
  response: RawResponse,
  envelope: Envelope,
  operation: 'create' | 'update' | 'delete' | 'none',
  context: string,
  expected?: { id?: number; fields?: Partial<Book> },
): void {
  if (response.status < 200 || response.status >= 300 || operation === 'none') {
    expect(after.text, `store changed by a ${response.status} answer\n${context}`).toBe(before.text);
    return;
  }
  switch (operation) {
    case 'create': {
      const book = expectBook(envelope.data, context);
      expect(after.books, `store after a 201\n${context}`).toEqual([...before.books, book]);
      expect(before.books.every((old) => old.id < book.id), `new id not above the old ones\n${context}`).toBe(true);
      if (expected?.fields) expectFields(book, expected.fields, context);
      return;
    }
    case 'update': {
      const book = expectBook(envelope.data, context);
      const old = before.books.find((candidate) => candidate.id === book.id);
      expect(old, `PUT answered a book that did not exist\n${context}`).toBeDefined();
      if (expected?.id !== undefined) expect(book.id, `PUT answered another book\n${context}`).toBe(expected.id);
      expect(after.books, `store after a PUT 200\n${context}`).toEqual(before.books.map((candidate) => (candidate.id === book.id ? book : candidate)));
      if (old && expected?.fields) expectFields(book, { ...old, ...expected.fields }, context);
      return;
    }
    case 'delete': {
      expect(envelope.data, context).toBeNull();
      const gone = before.books.filter((book) => !after.books.some((kept) => kept.id === book.id));
      expect(gone.length, `DELETE 200 must remove exactly one book\n${context}`).toBe(1);
      if (expected?.id !== undefined) expect(gone[0]?.id, `DELETE removed another book\n${context}`).toBe(expected.id);
      expect(after.books, `store after a DELETE 200\n${context}`).toEqual(before.books.filter((book) => book.id !== gone[0]?.id));
    }
  }
}

/** The stored book holds exactly what was sent (no trimming, no normalisation, no truncation). */
function expectFields(book: Book, fields: Partial<Book>, context: string) {
  if (fields.title !== undefined) expect(book.title, `title round trip\n${context}`).toBe(fields.title);
  if (fields.author !== undefined) expect(book.author, `author round trip\n${context}`).toBe(fields.author);
  if (fields.year !== undefined) expect(sameYear(book.year, fields.year), `year round trip: ${book.year} vs ${fields.year}\n${context}`).toBe(true);
}

// ---------------------------------------------------------------------------------------
// Endpoint cases
// ---------------------------------------------------------------------------------------

export const ENDPOINTS = ['token', 'create', 'list', 'read', 'read-missing', 'update', 'update-missing', 'delete', 'delete-missing'] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

export interface Target {
  method: string;
  path: string;
  protected: boolean;
  operation: 'create' | 'update' | 'delete' | 'none';
  id?: number;
  write: boolean;
}

/** What a request to `endpoint` is: its method and path, on one of `books` (`pick`) or a missing id. */
export function targetOf(endpoint: Endpoint, books: Book[], pick: number): Target {
  const book = books[pick % Math.max(1, books.length)];
  const id = book?.id ?? 1;
  switch (endpoint) {
    case 'token':
      return { method: 'POST', path: '/token', protected: false, operation: 'none', write: true };
    case 'create':
      return { method: 'POST', path: '/book', protected: true, operation: 'create', write: true };
    case 'list':
      return { method: 'GET', path: '/books', protected: true, operation: 'none', write: false };
    case 'read':
      return { method: 'GET', path: `/book/${id}`, protected: true, operation: 'none', id, write: false };
    case 'read-missing':
      return { method: 'GET', path: `/book/${MISSING_ID}`, protected: true, operation: 'none', write: false };
    case 'update':
      return { method: 'PUT', path: `/book/${id}`, protected: true, operation: 'update', id, write: true };
    case 'update-missing':
      return { method: 'PUT', path: `/book/${MISSING_ID}`, protected: true, operation: 'none', write: true };
    case 'delete':
      return { method: 'DELETE', path: `/book/${id}`, protected: true, operation: 'delete', id, write: true };
    case 'delete-missing':
      return { method: 'DELETE', path: `/book/${MISSING_ID}`, protected: true, operation: 'none', write: true };
  }
}

export function successShape(target: Target): 'token' | 'book' | 'books' | 'null' {
  if (target.path === '/token') return 'token';
  if (target.path === '/books') return 'books';
  return target.method === 'DELETE' ? 'null' : 'book';
}

/** Authentication comes first: no valid token, no 2xx and no "Book not found". */
export function expectAuthenticationFirst(isProtected: boolean, validAuth: boolean, response: RawResponse, envelope: Envelope, context: string) {
  if (!isProtected) return;
  const malformed = response.status === 400 && envelope.message === 'Bad request'; // rejected by the HTTP parser itself
  if (!validAuth && !malformed) {
    expect(response.status, `a protected operation without a valid token must be 401\n${context}`).toBe(401);
    expect(['Authorization token required', 'Invalid token'], context).toContain(envelope.message);
  }
  if (validAuth) {
    expect(response.status, `a valid token was refused\n${context}`).not.toBe(401);
  }
}

// ---------------------------------------------------------------------------------------
// The suites: one service per store, and its fixture
// ---------------------------------------------------------------------------------------

/**
 * Registers `properties` once per store, inside describe('fuzzing every endpoint (fast-check)'),
 * with a service of its own (no login limit, warnings only) and a valid token in `fixture`.
 */
export function fuzzEveryStore(properties: (fixture: Fixture, kind: StoreKind) => void): void {
  // Fuzzed on the stores STORE_SCALE names only. MySQL is deliberately left out: the input
  // handling is the same code on every store, the run time is spent where the stores differ
  // least, and MySQL is covered by the contract suites.
  forEachStore((kind) => {
    describe('fuzzing every endpoint (fast-check)', () => {
      const service = useService(kind, { LOGIN_RATE_LIMIT: '0', LOG_LEVEL: 'warn' });
      const fixture: Fixture = { port: 0, token: '' };

      beforeAll(async () => {
        fixture.port = portOf(service.current.baseUrl);
        fixture.token = await service.client.token();
      });

      properties(fixture, kind);
    });
  }, FUZZED_STORES);
}
