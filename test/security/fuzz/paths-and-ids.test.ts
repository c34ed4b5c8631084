// Fuzzing request paths and ids (harness.ts says what every request is held to): any method,
// percent-encoded junk, very long ids, raw bytes, the operational paths; a valid token reaches a
// stored book by any spelling of its decimal id and nothing else (docs/api.md "Ids").
import fc from 'fast-check';
import { expect } from 'vitest';
import { expectBook, expectEnvelopeShape } from '../../helpers/client/envelope.js';
import { rawRequest, type RawRequest } from '../../helpers/client/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../../helpers/client/test-account.js';
import { describeRequest, ensureBooks, expectPrototypesUntouched, expectStoreEffect, fuzzEveryStore, itHolds, snapshot, type Fixture } from './harness.js';
import { anyString, authChoice, authorization, type AuthChoice } from './inputs.js';

const MAX_BOOK_ID = 2n ** 63n - 1n;

// ---------------------------------------------------------------------------------------
// Path and id cases
// ---------------------------------------------------------------------------------------

const hex = (byte: number) => `%${byte.toString(16).padStart(2, '0').toUpperCase()}`;
const percentEncode = (text: string) => [...Buffer.from(text, 'utf8')].map(hex).join('');
const URL_CHARS = "abcxyzABC0123456789-._~!$&'()*+,;=:@%/?#[]".split('');

const idSegment = fc.oneof(
  { weight: 3, arbitrary: fc.nat({ max: 50 }).map(String) },
  { weight: 2, arbitrary: fc.bigInt({ min: 0n, max: 2n ** 70n }).map(String) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 8000 }).map((length) => '9'.repeat(length)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 8000 }).map((length) => `${'0'.repeat(length)}1`) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '0', '-1', '1.5', '1e3', '0x10', '+1', '%2B1', '%201', '1%20', '%00', '%zz', '%', '%e0%a4', '%C0%AF', '..', '%2e%2e',
      '1%2F2', '١', '%D9%A1', '１', '%EF%BC%91', '9223372036854775807', '9223372036854775808', '18446744073709551616',
      'NaN', 'Infinity', 'null', 'undefined', 'true', '[]', '{}', '1;DROP%20TABLE%20books', "1'%20OR%20'1'='1", '1--', '*',
      '%31', '0001', '1%00', '%FF', '%u0031', '1?x=1', '1#frag', '1/', '1/extra', '__proto__', 'constructor', ' 1',
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: fc.constantFrom(...URL_CHARS), maxLength: 30 }) },
  { weight: 2, arbitrary: anyString.map(percentEncode) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 20 }).map((bytes) => [...bytes].map(hex).join('')) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 10 }) }, // raw control and high bytes: malformed requests
);

const fuzzPath = fc.oneof(
  { weight: 8, arbitrary: idSegment.map((id) => `/book/${id}`) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '/books', '/token', '/book', '/book/', '/books/', '//books', '/./books', '/books/..', '/book/1/..', '/%62ooks', '/BOOKS',
      '/books?x=1', '/books#frag', '/books?__proto__[x]=1', '*', '/book/1?id=2', '/book/1#x', '/Book/1', '/book//1', '/book/1/',
      '/books%00', '/books%2F', '/%2Fbooks', '/token?username=admin', '/book?title=a', '/books/%2e%2e/token', '/', '',
      '/healthz', '/readyz', '/metrics', '/openapi.json', '/docs', '/docs/', '/docs/json', '/docs/static/index.html',
      '/docs/%2e%2e/%2e%2e/package.json', '/docs/static/..%2f..%2f..%2fpackage.json', '/docsx', '/healthz/', '/metrics?name[]=x',
    ),
  },
  { weight: 1, arbitrary: idSegment.map((segment) => `/docs/static/${segment}`) },
  { weight: 2, arbitrary: fc.webPath() },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...URL_CHARS), maxLength: 40 }).map((path) => `/${path}`) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 20 }).map((path) => `/${path}`) },
);

interface PathCase {
  method: string;
  path: string;
  auth: AuthChoice;
}

const pathCase: fc.Arbitrary<PathCase> = fc.record({
  method: fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom('GET', 'PUT', 'DELETE', 'POST') },
    { weight: 2, arbitrary: fc.constantFrom('PATCH', 'OPTIONS', 'HEAD', 'TRACE') },
    { weight: 1, arbitrary: fc.constantFrom('FOO', 'get', 'G ET', 'PROPFIND', 'PURGE', 'SEARCH', 'QUERY') },
  ),
  path: fuzzPath,
  auth: authChoice,
});

/** Body sent with every path case that may take one: a valid book and a valid login at once. */
const PATH_CASE_BODY = JSON.stringify({ title: 'Path fuzz', author: 'Fuzz', year: 2001, username: TEST_USERNAME, password: TEST_PASSWORD });

/** `:id` as documented: a positive decimal integer within the 64-bit range, after percent-decoding. */
function modelId(segment: string): bigint | undefined | 'unknown' {
  if (!/^[A-Za-z0-9%._~+-]{1,100}$/.test(segment)) return 'unknown';
  let decoded: string;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  const digits = /^0*([1-9][0-9]*)$/.exec(decoded)?.[1];
  if (digits === undefined) return undefined;
  const id = BigInt(digits);
  return id <= MAX_BOOK_ID ? id : undefined;
}

async function runPathCase(fixture: Fixture, testCase: PathCase): Promise<void> {
  const before = await ensureBooks(fixture);
  const auth = authorization(testCase.auth, fixture.token);
  const takesBody = ['PUT', 'POST', 'PATCH'].includes(testCase.method);
  const request: RawRequest = {
    method: testCase.method,
    path: testCase.path,
    headers: [...auth.headers, ...(takesBody ? ([['Content-Type', 'application/json']] as Array<[string, string]>) : [])],
    body: takesBody ? PATH_CASE_BODY : undefined,
  };
  const context = describeRequest(request, { validToken: auth.valid });
  const exchange = await rawRequest(fixture.port, request, { timeoutMs: 15_000 });
  if (exchange.response === undefined) {
    throw new Error(`no complete response (closed: ${exchange.closed}, error: ${exchange.error ?? 'none'}, ${exchange.received.length} bytes)\n${context}`);
  }
  const response = exchange.response;
  expect(response.status, `5xx\n${context}`).toBeLessThan(500);
  // The operational answers that are not the envelope (docs/operations.md "Health, metrics and the API document"): metrics text,
  // the OpenAPI document, the docs page and its assets and redirects.
  const pathname = testCase.path.split('?')[0] ?? '';
  const notEnvelope = /^(GET|HEAD)$/.test(testCase.method) && /^\/(metrics|openapi\.json|docs(\/.*)?)$/.test(pathname) && response.status < 400;
  if (testCase.method === 'HEAD' && !notEnvelope) {
    expect(response.headers['content-type'], context).toMatch(/^application\/json(;|$)/);
  }
  const envelope = testCase.method === 'HEAD' || notEnvelope ? undefined : expectEnvelopeShape(response, context);
  if (notEnvelope) expect(response.body, `a file outside the docs assets\n${context}`).not.toMatch(/"devDependencies"|root:x:0:0|SECRET_TOKEN=/);
  expectPrototypesUntouched(context);
  const success = response.status >= 200 && response.status < 300;
  const bookRoute = testCase.path.startsWith('/book/') || testCase.path === '/books' || testCase.path === '/book';
  // Only a valid token ever reaches a book: no 2xx on a book route, no "Book not found" without it.
  if (!auth.valid && envelope !== undefined) {
    expect(success && bookRoute, `2xx on a book route without a valid token\n${context}`).toBe(false);
    expect(envelope.message, `"Book not found" without a valid token\n${context}`).not.toBe('Book not found');
  }

  if (envelope !== undefined && response.status === 200 && testCase.method === 'GET' && testCase.path.startsWith('/book/')) {
    const book = expectBook(envelope.data, context);
    expect(before.books, `GET answered a book that is not in the store\n${context}`).toContainEqual(book);
  }
  if (testCase.method !== 'GET' && testCase.method !== 'HEAD' && envelope !== undefined) {
    const after = await snapshot(fixture);
    const operation =
      !success || envelope.message === 'Token generated successfully'
        ? 'none'
        : testCase.method === 'POST'
          ? 'create'
          : testCase.method === 'PUT'
            ? 'update'
            : testCase.method === 'DELETE'
              ? 'delete'
              : 'none';
    expect(success && operation === 'none' && envelope.message !== 'Token generated successfully', `unexpected 2xx\n${context}`).toBe(false);
    expectStoreEffect(before, after, response, envelope, operation, context, {
      fields: operation === 'create' || operation === 'update' ? { title: 'Path fuzz', author: 'Fuzz', year: 2001 } : undefined,
    });
  }

  // GET /book/<id> with a valid token: the stored book, or 404 "Book not found" for
  // anything that is not the decimal id of a stored book (never another 4xx, never 5xx).
  const match = /^\/book\/([^/?#]*)$/.exec(testCase.path);
  if (auth.valid && testCase.method === 'GET' && match && envelope !== undefined) {
    const id = modelId(match[1] ?? '');
    if (id !== 'unknown') {
      const stored = id === undefined ? undefined : before.books.find((book) => BigInt(book.id) === id);
      if (stored) {
        expect(response.status, `GET of a stored book by a spelling of its id\n${context}`).toBe(200);
        expect(envelope.data, context).toEqual(stored);
      } else {
        expect({ status: response.status, message: envelope.message }, context).toEqual({ status: 404, message: 'Book not found' });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// The suites
// ---------------------------------------------------------------------------------------

fuzzEveryStore((fixture, kind) => {
  itHolds(
    'generated paths and ids (any method, percent-encoded junk, very long ids, raw bytes): envelope, no 5xx, no drop, auth before ids, store changes only on 2xx',
    pathCase,
    (testCase) => runPathCase(fixture, testCase),
    2000,
    kind,
  );
});
