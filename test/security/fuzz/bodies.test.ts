// Fuzzing request bodies (harness.ts says what every request is held to): generated JSON text
// at every body endpoint, with any Content-Type and Authorization, raw bytes spliced in,
// prototype-poisoning keys, and nesting 10,000 deep and more. The conformance property
// additionally predicts the status of each request from the documented rules (docs/api.md
// "Validation and errors", docs/api.md "Validation" and "Ids": book and login bodies, ids, JSON
// whatever the Content-Type).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Book } from '../../helpers/client/books.js';
import { expectBook, expectEnvelopeShape, expectSuccessData, type Envelope } from '../../helpers/client/envelope.js';
import type { RawRequest, RawResponse } from '../../helpers/client/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../../helpers/client/test-account.js';
import {
  MISSING_ID,
  PROPERTY_TIMEOUT_MS,
  describeRequest,
  ensureBooks,
  expectAuthenticationFirst,
  expectPrototypesUntouched,
  expectStoreEffect,
  fuzzEveryStore,
  itHolds,
  params,
  send,
  snapshot,
  successShape,
  targetOf,
  type Endpoint,
  type Fixture,
  type Target,
} from './harness.js';
import { LONE_SURROGATE, anyString, authChoice, authorization, charUnit, contentType, type AuthChoice } from './inputs.js';

// ---------------------------------------------------------------------------------------
// Generators: JSON text (not values), so that duplicate keys, `__proto__` keys, escaped keys,
// numbers such as 1e400 or -0 and lone-surrogate escapes reach the service exactly as written.
// ---------------------------------------------------------------------------------------

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
// Body cases
// ---------------------------------------------------------------------------------------

function encodeBody(text: string, splice: { at: number; bytes: number[] } | undefined): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  if (splice === undefined) return bytes;
  const at = splice.at % (bytes.length + 1);
  return Buffer.concat([bytes.subarray(0, at), Buffer.from(splice.bytes), bytes.subarray(at)]);
}

function pickBookFields(value: unknown): Partial<Book> {
  if (!isPlainObject(value)) return {};
  const fields: Partial<Book> = {};
  if (typeof value.title === 'string') fields.title = value.title;
  if (typeof value.author === 'string') fields.author = value.author;
  if (typeof value.year === 'number') fields.year = value.year;
  return fields;
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

/** The documented rules (docs/api.md) for the status and message of a body request. */
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
// The suites
// ---------------------------------------------------------------------------------------

fuzzEveryStore((fixture, kind) => {
  itHolds(
    'generated bodies (JSON values, wrong types, lone surrogates, NUL, 1e400, poisoned keys, junk bytes) with any Content-Type and Authorization: envelope, no 5xx, no drop, store changes only on 2xx',
    bodyCase,
    (testCase) => runBodyCase(fixture, testCase),
    3000,
    kind,
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
            // docs/api.md: `__proto__` and `constructor.prototype` keys are refused.
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

  itHolds(
    'conformance: the status and message of every generated body request are the ones the documented rules give',
    bodyCase,
    async (testCase) => {
      const outcome = await runBodyCase(fixture, testCase);
      const expected = expectedByDesign(outcome);
      const actual: [number, string] = [outcome.response.status, outcome.envelope.message];
      expect(expected, `docs/api.md rules give ${JSON.stringify(expected)}, the service answered ${JSON.stringify(actual)}\n${outcome.context}`).toContainEqual(actual);
    },
    1500,
    kind,
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
