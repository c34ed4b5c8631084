// Property-based robustness tests (fast-check): generated bodies, paths, ids and headers
// thrown at every endpoint, with a valid token or not, over bare sockets (no client-side
// normalisation). SQLite gets the full run, PostgreSQL a smaller one (FUZZ_SCALE multiplies
// every run count; FUZZ_SEED replays a run).
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
// The conformance properties additionally predict the status of each request from the
// documented rules (README "Validation and errors", docs/api.md "Validation" and "Ids": book
// and login bodies, ids, JSON whatever the Content-Type).
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { flipSignatureBit, futureExp, hmacToken, hmacTokenFor, nowSeconds, unsecuredToken, WRONG_SECRET } from '../helpers/forge-token.js';
import { machinery } from '../helpers/node-http.js';
import { portOf, rawRequest, type RawRequest, type RawResponse } from '../helpers/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME, useService } from '../helpers/service.js';
import { expectEnvelopeShape, type BookData, type Envelope } from '../helpers/envelope.js';
import { expectBook, expectPrototypesUntouched, expectSuccessData } from '../helpers/security.js';
import { forEachStore, type StoreKind } from '../helpers/stores.js';

const SCALE = Number(process.env.FUZZ_SCALE ?? '1');
/** SQLite gets the full run; PostgreSQL a fifth of it; MySQL is left to the contract suites. */
const STORE_SCALE: Partial<Record<StoreKind, number>> = { sqlite: 1, postgres: 0.2 };
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const MISSING_ID = '8000000000000000000'; // within 64 bits, never generated in a test database
const MAX_BOOK_ID = 2n ** 63n - 1n;
const PROPERTY_TIMEOUT_MS = 180_000;

function params<T>(runs: number, kind: StoreKind): fc.Parameters<T> {
  const numRuns = Math.max(10, Math.round(runs * SCALE * (STORE_SCALE[kind] ?? 0)));
  return SEED === undefined ? { numRuns } : { numRuns, seed: SEED };
}

// ---------------------------------------------------------------------------------------
// Generators: JSON text (not values), so that duplicate keys, `__proto__` keys, escaped keys,
// numbers such as 1e400 or -0 and lone-surrogate escapes reach the service exactly as written.
// ---------------------------------------------------------------------------------------

const SPECIAL_CHARS = [
  '\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', ' ', '\t', '\n', '\r', '\u00A0', '\u0085', '\u2028', '\u2029',
  '\uFEFF', '\u200B', '\u3000', '"', '\\', '/', '\u001F', '\u007F', '😀', '\u0301', '\u202E', '%', "'", '<', '>',
  '$', '{', '}', '[', ']', ':', ',', 'é', 'ß', 'İ', '\uFFFD', '\uFFFF',
];

/** With the `u` flag a surrogate range matches only unpaired surrogates. */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const charUnit = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_CHARS) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
);

/** Any string: short and wild, or long around the 500-character limit. */
const anyString = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: charUnit, maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 490, max: 1010 }), fc.constantFrom('x', 'é', '😀', ' ', 'a ', '\u0000'))
      .map(([count, piece]) => piece.repeat(count)),
  },
);

/** A string the service must accept as a title or author. */
const goodText = fc
  .string({ unit: fc.oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }), fc.constantFrom(' ', 'é', '😀', "'", '"', '\\', '%', ';')), minLength: 1, maxLength: 40 })
  .filter((text) => /\S/u.test(text) && !/^\p{White_Space}*$/u.test(text) && !text.includes('\u0000') && !LONE_SURROGATE.test(text));

const stringText = fc.oneof(
  { weight: 8, arbitrary: anyString.map((text) => JSON.stringify(text)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('"\\u0000"', '"\\ud800"', '"\\uDFFF"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"a\\u0000b"', '"\\u0020"', '"\\/"', '""', '"\\t\\n"'),
  },
  // Not valid JSON when the text holds a quote, a backslash or a control character.
  { weight: 1, arbitrary: anyString.map((text) => `"${text}"`) },
);

const numberText = fc.oneof(
  fc.integer().map(String),
  fc.integer({ min: -20_000, max: 20_000 }).map(String),
  fc.double().map((value) => (Number.isFinite(value) ? JSON.stringify(value) : '1e400')),
  fc.constantFrom(
    '1e400', '-1e400', '1e-400', '-0', '0.0', '-0.0', '1999.0', '1.999e3', '1999.5', '1E4', '1e3', '0e0',
    '123456789012345678901234567890', '9007199254740993', '-9999', '9999', '10000', '-10000', '1999.0000000000001',
  ),
);

const scalarText = fc.oneof(
  { weight: 4, arbitrary: stringText },
  { weight: 3, arbitrary: numberText },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null') },
);

const POISON_KEYS = ['"__proto__"', '"__proto\\u005f_"', '"\\u005f\\u005fproto__"', '"\\u005F_pr\\u006fto__"'];

const keyText = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .constantFrom('title', 'author', 'year', 'id', 'username', 'password', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', 'isAdmin', 'polluted', 'status', 'data')
      .map((key) => JSON.stringify(key)),
  },
  { weight: 1, arbitrary: fc.constantFrom(...POISON_KEYS, '"constructo\\u0072"') },
  { weight: 3, arbitrary: anyString.map((key) => JSON.stringify(key)) },
);

const { value: valueText } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small', maxDepth: 4 }, scalarText, tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 4 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(keyText, tie('value')), { maxLength: 5 })
    .map((entries) => `{${entries.map(([key, value]) => `${key}:${value}`).join(',')}}`),
}));

/** `{key: value, ...}` with the entries in the given order. */
function objectText(entries: Array<[string, string | undefined]>): string {
  return `{${entries
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .map(([key, value]) => `${key.startsWith('"') ? key : JSON.stringify(key)}:${value}`)
    .join(',')}}`;
}

/** An optional field: usually a good value, sometimes a bad string, sometimes any JSON. */
function field(good: fc.Arbitrary<string>): fc.Arbitrary<string | undefined> {
  return fc.option(
    fc.oneof({ weight: 5, arbitrary: good }, { weight: 2, arbitrary: stringText }, { weight: 1, arbitrary: numberText }, { weight: 1, arbitrary: valueText }),
    { nil: undefined, freq: 6 },
  );
}

const bookBodyText = fc
  .tuple(
    field(goodText.map((text) => JSON.stringify(text))),
    field(goodText.map((text) => JSON.stringify(text))),
    field(fc.oneof(fc.integer({ min: -9999, max: 9999 }).map(String), numberText)),
    fc.array(fc.tuple(keyText, valueText), { maxLength: 2 }),
    fc.nat(),
  )
  .map(([title, author, year, extras, rotate]) => {
    const entries: Array<[string, string | undefined]> = [['title', title], ['author', author], ['year', year], ...extras];
    const shift = rotate % entries.length;
    return objectText([...entries.slice(shift), ...entries.slice(0, shift)]);
  });

const loginBodyText = fc
  .tuple(
    field(fc.oneof(fc.constant(JSON.stringify(TEST_USERNAME)), anyString.map((text) => JSON.stringify(text)))),
    field(fc.oneof(fc.constant(JSON.stringify(TEST_PASSWORD)), anyString.map((text) => JSON.stringify(text)))),
    fc.array(fc.tuple(keyText, valueText), { maxLength: 2 }),
  )
  .map(([username, password, extras]) => objectText([['username', username], ['password', password], ...extras]));

const POLLUTIONS = [
  '{"polluted":"yes"}',
  '{"isAdmin":true,"polluted":1}',
  '{"title":"x","author":"y","year":1,"id":1,"extra":"leak"}',
  '{"toString":"x","valueOf":1}',
  '[]',
  'null',
  '1',
];

/** Prototype-poisoning attempts, at the top level or nested, plain or with escaped keys. */
const poisonBodyText = fc
  .tuple(
    fc.constantFrom('proto', 'constructor', 'escaped-constructor', 'nested-field', 'in-array', 'deep', 'benign-constructor'),
    fc.constantFrom(...POISON_KEYS),
    fc.constantFrom(...POLLUTIONS),
    fc.nat({ max: 3 }),
    fc.integer({ min: 1, max: 30 }),
  )
  .map(([form, protoKey, pollution, position, depth]) => {
    const book: Array<[string, string]> = [
      ['title', '"Poisoned"'],
      ['author', '"Mallory"'],
      ['year', '2000'],
      ['username', JSON.stringify(TEST_USERNAME)],
      ['password', JSON.stringify(TEST_PASSWORD)],
    ];
    const insert = (entry: [string, string]) => objectText([...book.slice(0, position), entry, ...book.slice(position)]);
    switch (form) {
      case 'proto':
        return insert([protoKey, pollution]);
      case 'constructor':
        return insert(['constructor', `{"prototype":${pollution}}`]);
      case 'escaped-constructor':
        return insert(['"constructo\\u0072"', `{"prototyp\\u0065":${pollution}}`]);
      case 'nested-field':
        return objectText([['title', `{${protoKey}:${pollution}}`], ['author', '"a"'], ['year', '1']]);
      case 'in-array':
        return `[{${protoKey}:${pollution}}]`;
      case 'deep':
        return insert(['nested', `${'{"a":'.repeat(depth)}{${protoKey}:${pollution}}${'}'.repeat(depth)}`]);
      default:
        // `constructor` without `prototype` is an ordinary unknown field.
        return insert(['constructor', '{"name":"x"}']);
    }
  });

/** Whatever a client might send as a body. */
const bodyText = fc.oneof(
  { weight: 5, arbitrary: bookBodyText },
  { weight: 2, arbitrary: loginBodyText },
  { weight: 2, arbitrary: valueText },
  { weight: 2, arbitrary: fc.json({ stringUnit: charUnit, maxDepth: 3 }) },
  { weight: 1, arbitrary: poisonBodyText },
  { weight: 1, arbitrary: fc.string({ unit: charUnit, maxLength: 40 }) }, // not JSON at all
  { weight: 1, arbitrary: fc.tuple(bookBodyText, fc.nat()).map(([text, cut]) => text.slice(0, cut % (text.length + 1))) }, // truncated
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\uFEFF', '\uFEFF{}', '{}', '[]', 'null', '0', '""', '{"title":"a","author":"b","year":1}\u0000', '{} {}', '{}garbage') },
);

/** Raw bytes spliced into the encoded body: invalid UTF-8, overlong NUL, an encoded surrogate, a BOM. */
const rawBytes = fc.option(
  fc.record({
    at: fc.nat(),
    bytes: fc.constantFrom<number[]>([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0x00], [0xef, 0xbb, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0x80], [0xfe, 0xff]),
  }),
  { nil: undefined, freq: 8 },
);

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'application/octet-stream',
  'application/vnd.api+json',
  '*/*',
];

/** A Content-Type header value, or none. Some of them are not media types at all. */
const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9+.-]{1,12}(; ?[a-z]{1,8}=[a-z0-9-]{1,8})?$/) },
  { weight: 1, arbitrary: fc.string({ unit: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), maxLength: 20 }) },
);

// ---------------------------------------------------------------------------------------
// Authorization
// ---------------------------------------------------------------------------------------

/** How the Authorization header is built from the current valid token (or not). */
interface AuthChoice {
  form:
    | 'raw'
    | 'bearer'
    | 'padded'
    | 'none'
    | 'empty'
    | 'blank'
    | 'junk'
    | 'bearer-junk'
    | 'basic'
    | 'mutated'
    | 'truncated'
    | 'alg-none'
    | 'wrong-secret'
    | 'expired'
    | 'no-exp'
    | 'string-exp'
    | 'latin1'
    | 'first-valid'
    | 'first-junk';
  /** Junk text, the Bearer spelling, a mutation position: whatever the form needs. */
  text: string;
  n: number;
}

const VALID_FORMS = new Set<AuthChoice['form']>(['raw', 'bearer', 'padded', 'first-valid']);

const bearerSpelling = fc.tuple(fc.constantFrom('Bearer', 'bearer', 'BEARER', 'bEaReR'), fc.constantFrom(' ', '  ', '\t', ' \t ')).map(([word, gap]) => word + gap);
const headerSafeJunk = fc.string({ unit: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), maxLength: 60 });

const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
  { weight: 10, arbitrary: fc.record({ form: fc.constant('raw' as const), text: fc.constant(''), n: fc.constant(0) }) },
  { weight: 3, arbitrary: fc.record({ form: fc.constant('bearer' as const), text: bearerSpelling, n: fc.constant(0) }) },
  { weight: 1, arbitrary: fc.record({ form: fc.constant('padded' as const), text: fc.constantFrom(' ', '\t', '  '), n: fc.constant(0) }) },
  {
    weight: 6,
    arbitrary: fc.record({
      form: fc.constantFrom<AuthChoice['form']>(
        'none', 'empty', 'blank', 'junk', 'bearer-junk', 'basic', 'mutated', 'truncated', 'alg-none', 'wrong-secret',
        'expired', 'no-exp', 'string-exp', 'latin1', 'first-valid', 'first-junk',
      ),
      text: headerSafeJunk,
      n: fc.nat(),
    }),
  },
);

/** The Authorization header lines for a choice, and whether they carry a valid token. */
function authorization(choice: AuthChoice, token: string): { headers: Array<[string, string | Buffer]>; valid: boolean; required: boolean } {
  const built = buildAuthorization(choice, token);
  // Node keeps the first Authorization header and strips the spaces and tabs around it.
  const first = built.headers[0]?.[1];
  const required = first === undefined || first.toString('latin1').trim() === '';
  return { ...built, required };
}

function buildAuthorization(choice: AuthChoice, token: string): { headers: Array<[string, string | Buffer]>; valid: boolean } {
  const junk = choice.text.trim() === '' ? 'x' : choice.text;
  const [header = '', payload = ''] = token.split('.');
  const one = (value: string | Buffer) => ({ headers: [['Authorization', value]] as Array<[string, string | Buffer]>, valid: VALID_FORMS.has(choice.form) });
  switch (choice.form) {
    case 'raw':
      return one(token);
    case 'bearer':
      return one(choice.text + token);
    case 'padded':
      return one(choice.text + token + choice.text);
    case 'none':
      return { headers: [], valid: false };
    case 'empty':
      return one('');
    case 'blank':
      return one(' \t ');
    case 'junk':
      return one(junk);
    case 'bearer-junk':
      return one(`Bearer ${junk}`);
    case 'basic':
      return one(`Basic ${Buffer.from(`${TEST_USERNAME}:${TEST_PASSWORD}`).toString('base64')}`);
    case 'mutated': {
      // Change one character of the signed part (header.payload): the signature no longer matches.
      const signed = `${header}.${payload}`;
      const at = choice.n % signed.length;
      const replacement = signed[at] === 'A' ? 'B' : 'A';
      return one(`${signed.slice(0, at)}${replacement}${signed.slice(at + 1)}.${token.split('.')[2] ?? ''}`);
    }
    case 'truncated':
      return one(token.slice(0, choice.n % token.length));
    case 'alg-none':
      return one(unsecuredToken({ exp: futureExp() }));
    case 'wrong-secret':
      return one(hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify({ exp: futureExp() }), { secret: WRONG_SECRET }));
    case 'expired':
      return one(hmacTokenFor('HS256', { exp: nowSeconds() - 1 - (choice.n % 100_000) }));
    case 'no-exp':
      return one(hmacTokenFor('HS256', { sub: 'admin' }));
    case 'string-exp':
      return one(hmacTokenFor('HS256', { exp: String(futureExp()) }));
    case 'latin1':
      return one(Buffer.concat([Buffer.from(token.slice(0, 10), 'latin1'), Buffer.from([0xe9, 0xff, 0x80]), Buffer.from(token.slice(10), 'latin1')]));
    case 'first-valid':
      // Node keeps the first of repeated Authorization headers.
      return { headers: [['Authorization', token], ['Authorization', junk]], valid: true };
    case 'first-junk':
      return { headers: [['Authorization', flipSignatureBit(token)], ['Authorization', token]], valid: false };
  }
}

// ---------------------------------------------------------------------------------------
// The model of the documented rules, for the conformance properties.
// ---------------------------------------------------------------------------------------

type Verdict = 'valid' | 'invalid' | 'ambiguous';

function combine(...verdicts: Verdict[]): Verdict {
  if (verdicts.includes('invalid')) return 'invalid';
  if (verdicts.includes('ambiguous')) return 'ambiguous';
  return 'valid';
}

type Parsed = { readable: true; value: unknown } | { readable: false; why: 'unparsable' | 'poisoned' };

/** What the service reads from the body bytes: UTF-8 (replacement for bad bytes), BOM dropped, JSON, no poisoning. */
function parseBody(bytes: Buffer): Parsed {
  let text = bytes.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { readable: false, why: 'unparsable' };
  }
  return isPoisoned(value) ? { readable: false, why: 'poisoned' } : { readable: true, value };
}

/** A `__proto__` own key, or a `constructor` object with a `prototype` own key, anywhere (iterative: bodies can be deep). */
function isPoisoned(root: unknown): boolean {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Object.prototype.hasOwnProperty.call(node, '__proto__')) return true;
    const ctor = (node as Record<string, unknown>).constructor;
    if (Object.prototype.hasOwnProperty.call(node, 'constructor') && ctor !== null && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype')) {
      return true;
    }
    for (const key of Object.keys(node)) pending.push((node as Record<string, unknown>)[key]);
  }
  return false;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Title/author: 1 to 500 characters, not only white space, no NUL, no lone surrogate. */
function textVerdict(value: unknown): Verdict {
  if (typeof value !== 'string') return 'invalid';
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) return 'invalid';
  const codePoints = [...value].length;
  // "Characters": code points or UTF-16 units; a length that depends on the choice is ambiguous.
  const length: Verdict = codePoints < 1 || codePoints > 500 ? 'invalid' : value.length <= 500 ? 'valid' : 'ambiguous';
  // "White space": JavaScript's \s and Unicode's White_Space differ on U+0085 and U+FEFF.
  const jsBlank = !/\S/u.test(value);
  const unicodeBlank = /^\p{White_Space}*$/u.test(value);
  const blank: Verdict = jsBlank && unicodeBlank ? 'invalid' : !jsBlank && !unicodeBlank ? 'valid' : 'ambiguous';
  return combine(length, blank);
}

function yearVerdict(value: unknown): Verdict {
  return typeof value === 'number' && Number.isInteger(value) && value >= -9999 && value <= 9999 ? 'valid' : 'invalid';
}

function createVerdict(parsed: Parsed): Verdict {
  if (!parsed.readable || !isPlainObject(parsed.value)) return 'invalid';
  const body = parsed.value;
  return combine(textVerdict(body.title), textVerdict(body.author), yearVerdict(body.year));
}

function updateVerdict(parsed: Parsed): Verdict {
  if (!parsed.readable || !isPlainObject(parsed.value)) return 'invalid';
  const body = parsed.value;
  const has = (key: string) => Object.prototype.hasOwnProperty.call(body, key);
  return combine(
    has('title') ? textVerdict(body.title) : 'valid',
    has('author') ? textVerdict(body.author) : 'valid',
    has('year') ? yearVerdict(body.year) : 'valid',
  );
}

/** 'valid' login bodies are objects with string username and password. */
function loginVerdict(parsed: Parsed): Verdict {
  if (!parsed.readable || !isPlainObject(parsed.value)) return 'invalid';
  return typeof parsed.value.username === 'string' && typeof parsed.value.password === 'string' ? 'valid' : 'invalid';
}

// ---------------------------------------------------------------------------------------
// Talking to the service
// ---------------------------------------------------------------------------------------

interface Fixture {
  port: number;
  token: string;
}

interface Snapshot {
  text: string;
  books: BookData[];
}

/** The answer to a request; a connection closed without one is a failure. */
async function send(fixture: Fixture, request: RawRequest, context: string): Promise<RawResponse> {
  const exchange = await rawRequest(fixture.port, request, { timeoutMs: 15_000 });
  if (exchange.response === undefined) {
    throw new Error(
      `no complete response (server closed: ${exchange.closed}, client error: ${exchange.error ?? 'none'}, ` +
        `after ${exchange.elapsedMs} ms, ${exchange.received.length} bytes: ${JSON.stringify(exchange.received.toString('latin1').slice(0, 300))})\n${context}`,
    );
  }
  return exchange.response;
}

async function snapshot(fixture: Fixture): Promise<Snapshot> {
  const response = await send(fixture, { method: 'GET', path: '/books', headers: [['Authorization', fixture.token]] }, 'snapshot GET /books');
  const envelope = expectEnvelopeShape(response, 'snapshot GET /books');
  expect(response.status).toBe(200);
  expectSuccessData(envelope, 'books', 'snapshot');
  return { text: response.body, books: envelope.data as BookData[] };
}

/** Keeps a few books in the store so that PUT and DELETE have something to hit. */
async function ensureBooks(fixture: Fixture, minimum = 3): Promise<Snapshot> {
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

function encodeBody(text: string, splice: { at: number; bytes: number[] } | undefined): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (splice === undefined) return bytes;
  const at = splice.at % (bytes.length + 1);
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(splice.bytes), bytes.subarray(at)]);
}

function describeRequest(request: RawRequest, extra: Record<string, unknown> = {}): string {
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
function expectStoreEffect(
  before: Snapshot,
  after: Snapshot,
  response: RawResponse,
  envelope: Envelope,
  operation: 'create' | 'update' | 'delete' | 'none',
  context: string,
  expected?: { id?: number; fields?: Partial<BookData> },
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
function expectFields(book: BookData, fields: Partial<BookData>, context: string) {
  if (fields.title !== undefined) expect(book.title, `title round trip\n${context}`).toBe(fields.title);
  if (fields.author !== undefined) expect(book.author, `author round trip\n${context}`).toBe(fields.author);
  if (fields.year !== undefined) expect(sameYear(book.year, fields.year), `year round trip: ${book.year} vs ${fields.year}\n${context}`).toBe(true);
}

function pickBookFields(value: unknown): Partial<BookData> {
  if (!isPlainObject(value)) return {};
  const fields: Partial<BookData> = {};
  if (typeof value.title === 'string') fields.title = value.title;
  if (typeof value.author === 'string') fields.author = value.author;
  if (typeof value.year === 'number') fields.year = value.year;
  return fields;
}

// ---------------------------------------------------------------------------------------
// Endpoint cases
// ---------------------------------------------------------------------------------------

const ENDPOINTS = ['token', 'create', 'list', 'read', 'read-missing', 'update', 'update-missing', 'delete', 'delete-missing'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

interface Target {
  method: string;
  path: string;
  protected: boolean;
  operation: 'create' | 'update' | 'delete' | 'none';
  id?: number;
  write: boolean;
}

function targetOf(endpoint: Endpoint, books: BookData[], pick: number): Target {
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

interface BodyCase {
  endpoint: Endpoint;
  auth: AuthChoice;
  contentType: string | undefined;
  body: string;
  splice: { at: number; bytes: number[] } | undefined;
  chunked: boolean;
  pick: number;
}

const endpointWeights: Array<fc.WeightedArbitrary<Endpoint>> = [
  { weight: 4, arbitrary: fc.constant('token') },
  { weight: 6, arbitrary: fc.constant('create') },
  { weight: 5, arbitrary: fc.constant('update') },
  { weight: 1, arbitrary: fc.constant('update-missing') },
  { weight: 1, arbitrary: fc.constant('list') },
  { weight: 1, arbitrary: fc.constant('read') },
  { weight: 1, arbitrary: fc.constant('read-missing') },
  { weight: 1, arbitrary: fc.constant('delete') },
  { weight: 1, arbitrary: fc.constant('delete-missing') },
];

const bodyCase: fc.Arbitrary<BodyCase> = fc.record({
  endpoint: fc.oneof(...endpointWeights),
  auth: authChoice,
  contentType,
  body: bodyText,
  splice: rawBytes,
  chunked: fc.boolean(),
  pick: fc.nat(),
});

interface Outcome {
  response: RawResponse;
  envelope: Envelope;
  target: Target;
  validAuth: boolean;
  /** No Authorization header, or a blank one. */
  tokenRequired: boolean;
  parsed: Parsed;
  context: string;
}

/** Sends one generated body request and checks every robustness invariant. */
async function runBodyCase(fixture: Fixture, testCase: BodyCase): Promise<Outcome> {
  const before = await ensureBooks(fixture);
  const target = targetOf(testCase.endpoint, before.books, testCase.pick);
  const auth = authorization(testCase.auth, fixture.token);
  const bytes = encodeBody(testCase.body, testCase.splice);
  const headers: Array<[string, string | Buffer]> = [...auth.headers];
  if (testCase.contentType !== undefined) headers.push(['Content-Type', testCase.contentType]);
  const request: RawRequest = { method: target.method, path: target.path, headers, body: bytes, chunked: testCase.chunked };
  const parsed = parseBody(bytes);
  const context = describeRequest(request, { validToken: auth.valid });

  const response = await send(fixture, request, context);
  const envelope = expectEnvelopeShape(response, context);
  expectPrototypesUntouched(context);
  expectAuthenticationFirst(target.protected, auth.valid, response, envelope, context);
  if (response.status >= 200 && response.status < 300) {
    expectSuccessData(envelope, successShape(target), context);
  }
  if (target.write) {
    const after = await snapshot(fixture);
    const fields = parsed.readable ? pickBookFields(parsed.value) : undefined;
    expectStoreEffect(before, after, response, envelope, target.operation, context, { id: target.id, fields });
  } else if (response.status === 200 && target.id !== undefined) {
    expect(envelope.data, `GET answered something else than the stored book\n${context}`).toEqual(before.books.find((book) => book.id === target.id));
  }
  return { response, envelope, target, validAuth: auth.valid, tokenRequired: auth.required, parsed, context };
}

function successShape(target: Target): 'token' | 'book' | 'books' | 'null' {
  if (target.path === '/token') return 'token';
  if (target.path === '/books') return 'books';
  return target.method === 'DELETE' ? 'null' : 'book';
}

/** Authentication comes first: no valid token, no 2xx and no "Book not found". */
function expectAuthenticationFirst(isProtected: boolean, validAuth: boolean, response: RawResponse, envelope: Envelope, context: string) {
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

/** The documented rules (README, docs/api.md) for the status and message of a body request. */
function expectedByDesign(outcome: Outcome): Array<[number, string]> {
  const { target, parsed } = outcome;
  if (target.protected && !outcome.validAuth) {
    return [[401, outcome.tokenRequired ? 'Authorization token required' : 'Invalid token']];
  }
  const byVerdict = (verdict: Verdict, ok: [number, string], bad: [number, string]): Array<[number, string]> =>
    verdict === 'valid' ? [ok] : verdict === 'invalid' ? [bad] : [ok, bad];
  switch (target.path === '/token' ? 'token' : `${target.method} ${target.path.startsWith('/book/') ? (target.path.endsWith(MISSING_ID) ? 'missing' : 'existing') : target.path}`) {
    case 'token': {
      if (loginVerdict(parsed) === 'invalid') return [[400, 'Invalid request payload']];
      const body = (parsed as { value: Record<string, unknown> }).value;
      return body.username === TEST_USERNAME && body.password === TEST_PASSWORD ? [[200, 'Token generated successfully']] : [[401, 'Invalid credentials']];
    }
    case 'POST /book':
      return byVerdict(createVerdict(parsed), [201, 'Book created successfully'], [400, 'Invalid input']);
    case 'PUT existing':
      return byVerdict(updateVerdict(parsed), [200, 'Book updated successfully'], [400, 'Invalid input']);
    case 'GET /books':
      return [[200, 'Books retrieved successfully']];
    case 'GET existing':
      return [[200, 'Book retrieved successfully']];
    case 'DELETE existing':
      return [[200, 'Book deleted successfully']];
    default:
      return [[404, 'Book not found']]; // GET, PUT, DELETE of a missing id: 404 before the body is looked at
  }
}

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
  // The operational answers that are not the envelope (README "Operations"): metrics text,
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
// Header cases
// ---------------------------------------------------------------------------------------

/** Headers a client may add; some are odd (Expect, Content-Encoding, method overrides). */
const extraHeader = fc.oneof(
  fc.constantFrom<[string, string]>(
    ['Expect', '100-continue'],
    // Left out when HTTP_MACHINERY turns ignore-unknown-expect off: Node answers it with a bare 417.
    ...(machinery.ignoreUnknownExpect ? [['Expect', 'something-else'] as [string, string]] : []),
    ['Content-Encoding', 'gzip'],
    ['Accept', 'text/html'],
    ['Accept', 'application/xml'],
    ['Accept-Encoding', 'gzip, deflate, br'],
    ['Accept-Charset', 'utf-16'],
    ['X-HTTP-Method-Override', 'DELETE'],
    ['X-Forwarded-For', '203.0.113.9'],
    ['Forwarded', 'for=203.0.113.9'],
    ['Origin', 'https://evil.example'],
    ['Cookie', 'session=abc'],
    ['Range', 'bytes=0-1'],
    ['If-None-Match', '*'],
    ['If-Modified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT'],
    ['TE', 'trailers'],
    ['Upgrade', 'h2c'],
    ['X-Request-Id', 'fuzz-request-1'],
    ['Proxy-Authorization', 'Basic eDp5'],
    ['Content-Length', '0'],
    ['Content-Length', '-1'],
    ['Content-Length', '1, 2'],
    ['Host', 'evil.example'],
  ),
  fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), headerSafeJunk),
  fc.tuple(fc.constant('X-Request-Id'), headerSafeJunk),
  fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), fc.string({ unit: 'binary-ascii', maxLength: 12 }).map((value) => value.replace(/[\r\n]/g, ''))),
);

interface HeaderCase {
  endpoint: Endpoint;
  auth: AuthChoice;
  contentType: string | undefined;
  extras: Array<[string, string]>;
  pick: number;
}

const headerCase: fc.Arbitrary<HeaderCase> = fc.record({
  endpoint: fc.constantFrom(...ENDPOINTS),
  auth: authChoice,
  contentType,
  extras: fc.array(extraHeader, { maxLength: 3 }),
  pick: fc.nat(),
});

const HEADER_CASE_BODY = JSON.stringify({ title: 'Header fuzz', author: 'Fuzz', year: 2002, username: TEST_USERNAME, password: TEST_PASSWORD });

async function runHeaderCase(fixture: Fixture, testCase: HeaderCase): Promise<void> {
  const before = await ensureBooks(fixture);
  const target = targetOf(testCase.endpoint, before.books, testCase.pick);
  const auth = authorization(testCase.auth, fixture.token);
  const headers: Array<[string, string | Buffer]> = [...auth.headers, ...testCase.extras];
  if (testCase.contentType !== undefined) headers.push(['Content-Type', testCase.contentType]);
  const takesBody = target.method === 'POST' || target.method === 'PUT';
  const request: RawRequest = { method: target.method, path: target.path, headers, body: takesBody ? HEADER_CASE_BODY : undefined };
  const context = describeRequest(request, { validToken: auth.valid });
  const response = await send(fixture, request, context);
  const envelope = expectEnvelopeShape(response, context);
  expectPrototypesUntouched(context);
  expectAuthenticationFirst(target.protected, auth.valid, response, envelope, context);
  if (response.status >= 200 && response.status < 300) expectSuccessData(envelope, successShape(target), context);
  // Node strips the spaces and tabs around a header value.
  const requestId = testCase.extras.find(([name]) => name.toLowerCase() === 'x-request-id')?.[1].replace(/^[ \t]+|[ \t]+$/g, '');
  if (response.headers['x-request-id'] !== undefined) {
    // Echoed only when it is a plain token; otherwise a fresh id: never reflected raw.
    const echoed = response.headers['x-request-id'];
    expect(echoed === requestId || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(echoed), `x-request-id ${echoed}\n${context}`).toBe(true);
    expect(echoed, context).toMatch(/^[A-Za-z0-9._:@/+=-]{1,128}$/);
  }
  if (target.write) {
    const after = await snapshot(fixture);
    expectStoreEffect(before, after, response, envelope, target.operation, context, {
      id: target.id,
      fields: target.operation === 'delete' ? undefined : { title: 'Header fuzz', author: 'Fuzz', year: 2002 },
    });
  }
}

// ---------------------------------------------------------------------------------------
// The suites
// ---------------------------------------------------------------------------------------

forEachStore((kind) => {
  if (STORE_SCALE[kind] === undefined) {
    // Deliberately not fuzzed: the input handling is the same code on every store, and the run
    // time is spent where the stores differ least. MySQL is covered by the contract suites.
    it.skip(`${kind}: the fuzz runs on SQLite (full) and PostgreSQL (smaller); ${kind} is covered by the contract suites`, () => undefined);
    return;
  }

  describe('fuzzing every endpoint (fast-check)', () => {
    const service = useService(kind, { LOGIN_RATE_LIMIT: '0', LOG_LEVEL: 'warn' });
    const fixture: Fixture = { port: 0, token: '' };

    beforeAll(async () => {
      fixture.port = portOf(service.current.baseUrl);
      fixture.token = await service.client.token();
    });

    it(
      'generated bodies (JSON values, wrong types, lone surrogates, NUL, 1e400, poisoned keys, junk bytes) with any Content-Type and Authorization: envelope, no 5xx, no drop, store changes only on 2xx',
      async () => {
        await fc.assert(
          fc.asyncProperty(bodyCase, async (testCase) => {
            await runBodyCase(fixture, testCase);
          }),
          params(3000, kind),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      'prototype-poisoning bodies at every body endpoint: refused or harmless, and no later response carries extra fields',
      async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.record({
              endpoint: fc.constantFrom<Endpoint>('token', 'create', 'update', 'update-missing'),
              auth: fc.constant<AuthChoice>({ form: 'raw', text: '', n: 0 }),
              contentType: fc.constantFrom(undefined, 'application/json', 'text/plain'),
              body: poisonBodyText,
              splice: fc.constant(undefined),
              chunked: fc.boolean(),
              pick: fc.nat(),
            }),
            async (testCase) => {
              const outcome = await runBodyCase(fixture, testCase);
              // README: `__proto__` and `constructor.prototype` keys are refused.
              if (!outcome.parsed.readable && outcome.parsed.why === 'poisoned') {
                expect(outcome.response.status, `a poisoned body was accepted\n${outcome.context}`).toBe(testCase.endpoint === 'update-missing' ? 404 : 400);
              }
              // Later responses: exact key sets everywhere.
              const books = await snapshot(fixture);
              for (const book of books.books) expectBook(book);
              const first = books.books[0];
              if (first) {
                const read = await send(fixture, { method: 'GET', path: `/book/${first.id}`, headers: [['Authorization', fixture.token]] }, 'GET after poisoning');
                const envelope = expectEnvelopeShape(read, 'GET after poisoning');
                expect(Object.keys(envelope.data as object).sort()).toEqual(['author', 'id', 'title', 'year']);
              }
              const missing = await send(fixture, { method: 'GET', path: `/book/${MISSING_ID}`, headers: [['Authorization', fixture.token]] }, '404 after poisoning');
              expect(JSON.parse(missing.body)).toEqual({ status: 404, message: 'Book not found', data: null });
              const login = await send(
                fixture,
                { method: 'POST', path: '/token', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }) },
                'login after poisoning',
              );
              const loginEnvelope = expectEnvelopeShape(login, 'login after poisoning');
              expectSuccessData(loginEnvelope, 'token');
            },
          ),
          params(500, kind),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      'generated paths and ids (any method, percent-encoded junk, very long ids, raw bytes): envelope, no 5xx, no drop, auth before ids, store changes only on 2xx',
      async () => {
        await fc.assert(
          fc.asyncProperty(pathCase, async (testCase) => {
            await runPathCase(fixture, testCase);
          }),
          params(2000, kind),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      'generated Authorization, Content-Type and other headers at every endpoint: envelope, no 5xx, no drop, only a valid token authenticates',
      async () => {
        await fc.assert(
          fc.asyncProperty(headerCase, async (testCase) => {
            await runHeaderCase(fixture, testCase);
          }),
          params(2000, kind),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    it(
      'conformance: the status and message of every generated body request are the ones the documented rules give',
      async () => {
        await fc.assert(
          fc.asyncProperty(bodyCase, async (testCase) => {
            const outcome = await runBodyCase(fixture, testCase);
            const expected = expectedByDesign(outcome);
            const actual: [number, string] = [outcome.response.status, outcome.envelope.message];
            expect(expected, `README rules give ${JSON.stringify(expected)}, the service answered ${JSON.stringify(actual)}\n${outcome.context}`).toContainEqual(actual);
          }),
          params(1500, kind),
        );
      },
      PROPERTY_TIMEOUT_MS,
    );

    describe('10,000-deep and deeper nesting', () => {
      const DEPTHS = [10_000, 100_000];
      const deepBodies = DEPTHS.flatMap((depth) => [
        [`${depth}-deep array`, `${'['.repeat(depth)}${']'.repeat(depth)}`],
        [`${depth}-deep object`, `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`],
        [`${depth}-deep title`, `{"title":${'['.repeat(depth)}${']'.repeat(depth)},"author":"a","year":1}`],
        [`${depth}-deep unknown field`, `{"title":"t","author":"a","year":1,"x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`],
        [`${depth}-deep __proto__`, `{"title":"t","author":"a","year":1,"x":${'{"a":'.repeat(depth)}{"__proto__":{"polluted":1}}${'}'.repeat(depth)}}`],
        [`${depth}-deep mixed`, `${'[{"a":'.repeat(depth / 2)}0${'}]'.repeat(depth / 2)}`],
      ]);
      deepBodies.push(['500,000-deep array (just under 1 MiB)', `${'['.repeat(500_000)}${']'.repeat(500_000)}`]);
      deepBodies.push(['unterminated 1,000,000-deep array', '['.repeat(1_000_000)]);

      it.each(deepBodies)('%s at POST /token, POST /book, PUT /book/:id, GET /books, DELETE: envelope, no 5xx, the status and message the documented rules give', async (_name, text) => {
        for (const endpoint of ['token', 'create', 'update', 'update-missing', 'list', 'delete-missing'] as const) {
          const outcome = await runBodyCase(fixture, {
            endpoint,
            auth: { form: 'raw', text: '', n: 0 },
            contentType: 'application/json',
            body: text ?? '',
            splice: undefined,
            chunked: false,
            pick: 0,
          });
          const expected = expectedByDesign(outcome);
          expect(expected, outcome.context.slice(0, 300)).toContainEqual([outcome.response.status, outcome.envelope.message]);
        }
      }, 60_000);
    });
  });
});
