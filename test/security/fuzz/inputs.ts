// Generated inputs more than one fuzz suite sends: strings (wild characters, lone surrogates,
// lengths around the 500-character limit), Content-Type values, and Authorization headers built
// from the current valid token or not.
import fc from 'fast-check';
import { TEST_PASSWORD, TEST_USERNAME } from '../../helpers/client/test-account.js';
import { flipSignatureBit, futureExp, hmacToken, hmacTokenFor, nowSeconds, unsecuredToken, WRONG_SECRET } from '../../helpers/client/tokens.js';

// ---------------------------------------------------------------------------------------
// Strings
// ---------------------------------------------------------------------------------------

const SPECIAL_CHARS = [
  '\u0000', '\uD800', '\uDBFF', '\uDC00', '\uDFFF', ' ', '\t', '\n', '\r', '\u00A0', '\u0085', '\u2028', '\u2029',
  '\uFEFF', '\u200B', '\u3000', '"', '\\', '/', '\u001F', '\u007F', '😀', '\u0301', '\u202E', '%', "'", '<', '>',
  '$', '{', '}', '[', ']', ':', ',', 'é', 'ß', 'İ', '\uFFFD', '\uFFFF',
];

/** With the `u` flag a surrogate range matches only unpaired surrogates. */
export const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export const charUnit = fc.oneof(
  { weight: 5, arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
  { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_CHARS) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code)) },
);

/** Any string: short and wild, or long around the 500-character limit. */
export const anyString = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: charUnit, maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 490, max: 1010 }), fc.constantFrom('x', 'é', '😀', ' ', 'a ', '\u0000'))
      .map(([count, piece]) => piece.repeat(count)),
  },
);

// ---------------------------------------------------------------------------------------
// Content-Type
// ---------------------------------------------------------------------------------------

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
export const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9+.-]{1,12}(; ?[a-z]{1,8}=[a-z0-9-]{1,8})?$/) },
  { weight: 1, arbitrary: fc.string({ unit: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), maxLength: 20 }) },
);

// ---------------------------------------------------------------------------------------
// Authorization
// ---------------------------------------------------------------------------------------

/** How the Authorization header is built from the current valid token (or not). */
export interface AuthChoice {
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
export const headerSafeJunk = fc.string({ unit: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), maxLength: 60 });

export const authChoice: fc.Arbitrary<AuthChoice> = fc.oneof(
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
export function authorization(choice: AuthChoice, token: string): { headers: Array<[string, string | Buffer]>; valid: boolean; required: boolean } {
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

