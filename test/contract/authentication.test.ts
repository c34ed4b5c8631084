// Authentication of every protected operation (docs/api.md "Authentication"): a missing or
// empty Authorization header, the raw token or a Bearer prefix, which tokens are refused and
// accepted (HMAC family, exp required, nbf, no leeway), and authentication before every other
// check; with tokens forged by jose and by hand.
import { beforeAll, describe, expect, it } from 'vitest';
import {
  es256Token,
  flipSignatureBit,
  futureExp,
  hmacToken,
  hmacTokenFor,
  nowSeconds,
  rs256Token,
  signHmac,
  unsecuredToken,
  withoutSignaturePart,
  WRONG_SECRET,
} from '../helpers/client/tokens.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { useService } from '../helpers/service/start-service.js';
import type { ApiClient, ApiResponse } from '../helpers/client/api-client.js';

const TOKEN_REQUIRED = [401, 'Authorization token required', null] as const;
const INVALID_TOKEN = [401, 'Invalid token', null] as const;

const VALID_BOOK = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
/** Over the 1 MiB body limit. */
const OVERSIZE_BODY = JSON.stringify({ title: 'x'.repeat(1024 * 1024), author: 'a', year: 1 });

interface Operation {
  name: string;
  method: string;
  /** Path of a request that must be turned away before the operation runs. */
  rejectedPath: string;
  body?: unknown;
  /** Whether a successful request needs a stored book (its id goes into `:id`). */
  needsBook: boolean;
  path(id: string): string;
  success: { status: number; message: string };
}

const OPERATIONS: Operation[] = [
  {
    name: 'POST /book',
    method: 'POST',
    rejectedPath: '/book',
    body: VALID_BOOK,
    needsBook: false,
    path: () => '/book',
    success: { status: 201, message: 'Book created successfully' },
  },
  {
    name: 'GET /books',
    method: 'GET',
    rejectedPath: '/books',
    needsBook: false,
    path: () => '/books',
    success: { status: 200, message: 'Books retrieved successfully' },
  },
  {
    name: 'GET /book/:id',
    method: 'GET',
    rejectedPath: '/book/1',
    needsBook: true,
    path: (id) => `/book/${id}`,
    success: { status: 200, message: 'Book retrieved successfully' },
  },
  {
    name: 'PUT /book/:id',
    method: 'PUT',
    rejectedPath: '/book/1',
    body: { title: 'Dune Messiah' },
    needsBook: true,
    path: (id) => `/book/${id}`,
    success: { status: 200, message: 'Book updated successfully' },
  },
  {
    name: 'DELETE /book/:id',
    method: 'DELETE',
    rejectedPath: '/book/1',
    needsBook: true,
    path: (id) => `/book/${id}`,
    success: { status: 200, message: 'Book deleted successfully' },
  },
];

/** Tokens the service must refuse with 401 "Invalid token". Built at request time: exp is relative to now. */
const REJECTED_TOKENS: [string, () => Promise<string> | string][] = [
  ['a garbage token', () => 'garbage'],
  ['three garbage parts', () => 'not.a.jwt'],
  ['an expired token (exp an hour ago)', () => signHmac({ exp: nowSeconds() - 3600 })],
  ['a token whose exp is one second past', () => signHmac({ exp: nowSeconds() - 1 })],
  ['alg none, empty signature part (header.payload.)', () => unsecuredToken({ exp: futureExp() })],
  ['alg none, no signature part (header.payload)', () => withoutSignaturePart(unsecuredToken({ exp: futureExp() }))],
  [
    'alg none carrying a correct HMAC-SHA256 signature',
    () => hmacToken({ alg: 'none', typ: 'JWT' }, JSON.stringify({ exp: futureExp() })),
  ],
  ['HS256 signed with the wrong secret', () => signHmac({ exp: futureExp() }, 'HS256', WRONG_SECRET)],
  ['HS512 signed with the wrong secret', () => signHmac({ exp: futureExp() }, 'HS512', WRONG_SECRET)],
  ['HS256 without exp', () => signHmac({})],
  ['HS256 without exp but with other claims', () => signHmac({ sub: 'admin', iat: nowSeconds() })],
  ['exp as a string', () => hmacTokenFor('HS256', { exp: String(futureExp()) })],
  ['exp as null', () => hmacTokenFor('HS256', { exp: null })],
  ['exp as an array', () => hmacTokenFor('HS256', { exp: [futureExp()] })],
  ['nbf in the future', () => signHmac({ exp: futureExp(), nbf: nowSeconds() + 600 })],
  ['a real RS256 token (generated RSA key)', () => rs256Token({ exp: futureExp() })],
  [
    'RS256 header over an HMAC-SHA256 signature made with the secret (algorithm confusion)',
    () => hmacToken({ alg: 'RS256', typ: 'JWT' }, JSON.stringify({ exp: futureExp() })),
  ],
  [
    'HS384 header over an HMAC-SHA256 signature made with the secret',
    () => hmacToken({ alg: 'HS384', typ: 'JWT' }, JSON.stringify({ exp: futureExp() }), { hash: 'sha256' }),
  ],
  ['a flipped signature bit', async () => flipSignatureBit(await signHmac({ exp: futureExp() }))],
  ['a valid token with its signature removed (header.payload.)', async () => `${withoutSignaturePart(await signHmac({ exp: futureExp() }))}.`],
  ['a valid token with an extra part', async () => `${await signHmac({ exp: futureExp() })}.extra`],
  ['a payload that is a JSON array', () => hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify([{ exp: futureExp() }]))],
  ['a payload that is a JSON string', () => hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify('exp'))],
  ['a payload that is a JSON number', () => hmacToken({ alg: 'HS256', typ: 'JWT' }, String(futureExp()))],
  ['a payload that is JSON null', () => hmacToken({ alg: 'HS256', typ: 'JWT' }, 'null')],
  ['a payload that is not JSON', () => hmacToken({ alg: 'HS256', typ: 'JWT' }, `exp=${futureExp()}`)],
  // More RFC 8725 cases, beyond the ones above.
  ['a real ES256 token (generated P-256 key)', () => es256Token({ exp: futureExp() })],
  [
    'ES256 header over an HMAC-SHA256 signature made with the secret (algorithm confusion)',
    () => hmacToken({ alg: 'ES256', typ: 'JWT' }, JSON.stringify({ exp: futureExp() })),
  ],
  ['exp as a float', () => hmacTokenFor('HS256', { exp: futureExp() + 0.5 })],
  ['exp far in the past (1)', () => hmacTokenFor('HS256', { exp: 1 })],
  [
    'a crit header naming an extension the service does not know',
    () => hmacToken({ alg: 'HS256', typ: 'JWT', crit: ['x-unknown'], 'x-unknown': true }, JSON.stringify({ exp: futureExp() })),
  ],
  ['a truncated signature (last character dropped)', async () => (await signHmac({ exp: futureExp() })).slice(0, -1)],
  ['a truncated token (header only)', async () => (await signHmac({ exp: futureExp() })).split('.')[0]!],
  ['bad base64url in the payload (+ and /)', async () => (await signHmac({ exp: futureExp() })).replace(/\.(.)/, '.+/')],
  // ~100 KB once base64url-encoded: it fits the 128 KiB header limit, so it reaches verification.
  ['a 100 KB token (wrong secret)', () => signHmac({ exp: futureExp(), pad: 'x'.repeat(74 * 1024) }, 'HS256', WRONG_SECRET)],
  ['a 100 KB garbage token', () => `${'e'.repeat(50 * 1024)}.${'y'.repeat(50 * 1024)}.sig`],
  ['non-ASCII bytes in the token', async () => `${await signHmac({ exp: futureExp() })}\u00e9\u00ff`],
];

/** Tokens the service must accept: the HMAC family (HS256, HS384, HS512) signed with SECRET_TOKEN. */
const ACCEPTED_TOKENS: [string, () => Promise<string>][] = [
  ['HS256 forged with the right secret and a future exp', () => signHmac({ exp: futureExp() }, 'HS256')],
  ['HS384 with the right secret and a future exp', () => signHmac({ exp: futureExp() }, 'HS384')],
  ['HS512 with the right secret and a future exp', () => signHmac({ exp: futureExp() }, 'HS512')],
];

forEachStore((kind) => {
  describe('authentication of every protected operation', () => {
    const service = useService(kind);
    let token: string;

    beforeAll(async () => {
      token = await service.client.token();
    });

    /** Sends the operation so that it succeeds when `authorization` is accepted. */
    async function sendAuthorized(client: ApiClient, operation: Operation, authorization: string) {
      const id = operation.needsBook ? String((await client.createBook(token, VALID_BOOK)).id) : '';
      return client.request(operation.method, operation.path(id), { token: authorization, body: operation.body });
    }

    function expectSuccess(response: ApiResponse, operation: Operation) {
      expect(response.status, response.text).toBe(operation.success.status);
      expect(response.body).toMatchObject({ ...operation.success });
    }

    for (const operation of OPERATIONS) {
      describe(operation.name, () => {
        it('missing Authorization → 401 "Authorization token required"', async () => {
          const response = await service.client.request(operation.method, operation.rejectedPath, { body: operation.body });
          expectEnvelope(response, ...TOKEN_REQUIRED);
          expect(response.headers.get('content-type')).toMatch(/^application\/json/);
          // RFC 9110 §11.6.1: every 401 names a scheme; RFC 6750 §3.1: no error code without a token.
          expect(response.headers.get('www-authenticate')).toBe('Bearer realm="book-collection"');
        });

        it('empty Authorization → 401 "Authorization token required"', async () => {
          const response = await service.client.request(operation.method, operation.rejectedPath, {
            token: '',
            body: operation.body,
          });
          expectEnvelope(response, ...TOKEN_REQUIRED);
          expect(response.headers.get('www-authenticate')).toBe('Bearer realm="book-collection"');
        });

        it('the raw token from POST /token is accepted', async () => {
          expectSuccess(await sendAuthorized(service.client, operation, token), operation);
        });

        it.each(['Bearer', 'bearer', 'BEARER', 'bEaReR'])('"%s <token>" is accepted', async (prefix) => {
          expectSuccess(await sendAuthorized(service.client, operation, `${prefix} ${token}`), operation);
        });

        it('"Bearer " followed by a garbage token → 401 "Invalid token"', async () => {
          const response = await service.client.request(operation.method, operation.rejectedPath, {
            token: 'Bearer garbage',
            body: operation.body,
          });
          expectEnvelope(response, ...INVALID_TOKEN);
          expect(response.headers.get('www-authenticate')).toBe('Bearer realm="book-collection", error="invalid_token"');
        });

        it.each(REJECTED_TOKENS)('refused token: %s → 401 "Invalid token", raw and with the Bearer prefix', async (_name, forge) => {
          const forged = await forge();
          const response = await service.client.request(operation.method, operation.rejectedPath, {
            token: forged,
            body: operation.body,
          });
          expectEnvelope(response, ...INVALID_TOKEN);
          // The Bearer form is checked the same way.
          const bearer = await service.client.request(operation.method, operation.rejectedPath, {
            token: `Bearer ${forged}`,
            body: operation.body,
          });
          expectEnvelope(bearer, ...INVALID_TOKEN);
          for (const answer of [response, bearer]) {
            expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="book-collection", error="invalid_token"');
          }
        });

        it.each(ACCEPTED_TOKENS)('HMAC family with the right secret: %s → accepted', async (_name, forge) => {
          expectSuccess(await sendAuthorized(service.client, operation, await forge()), operation);
        });
      });
    }
  });

  describe('authentication comes before every other check', () => {
    const service = useService(kind);
    let bookId: string;

    beforeAll(async () => {
      const token = await service.client.token();
      bookId = String((await service.client.createBook(token, VALID_BOOK)).id);
    });

    const cases: [string, string, () => string, unknown][] = [
      ['an unreadable body on POST /book', 'POST', () => '/book', '{"title":'],
      ['a body that is not a Book on POST /book', 'POST', () => '/book', JSON.stringify({ title: 1 })],
      ['an empty body on POST /book', 'POST', () => '/book', ''],
      ['a missing book on GET', 'GET', () => '/book/999999999', undefined],
      ['a missing book on PUT', 'PUT', () => '/book/999999999', VALID_BOOK],
      ['a missing book on DELETE', 'DELETE', () => '/book/999999999', undefined],
      ['an unreadable body on PUT of an existing book', 'PUT', () => `/book/${bookId}`, '{"title":'],
      ['a non-numeric id on GET', 'GET', () => '/book/abc', undefined],
      ['a non-numeric id on PUT', 'PUT', () => '/book/abc', VALID_BOOK],
      ['a non-numeric id on DELETE', 'DELETE', () => '/book/abc', undefined],
      ['an id beyond 64 bits on GET', 'GET', () => `/book/${'9'.repeat(30)}`, undefined],
      ['an oversize body on POST /book', 'POST', () => '/book', OVERSIZE_BODY],
      ['an oversize body on PUT of an existing book', 'PUT', () => `/book/${bookId}`, OVERSIZE_BODY],
    ];

    it.each(cases)('without a token, %s → 401 "Authorization token required"', async (_name, method, path, body) => {
      const response = await service.client.request(method, path(), {
        body,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      });
      expectEnvelope(response, ...TOKEN_REQUIRED);
    });

    it.each(cases)('with a garbage token, %s → 401 "Invalid token"', async (_name, method, path, body) => {
      const response = await service.client.request(method, path(), {
        token: 'garbage',
        body,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      });
      expectEnvelope(response, ...INVALID_TOKEN);
    });

    it('a rejected PUT and DELETE leave the book as it was', async () => {
      await service.client.request('PUT', `/book/${bookId}`, { body: { title: 'changed' } });
      await service.client.request('DELETE', `/book/${bookId}`, { token: 'garbage' });
      const token = await service.client.token();
      const response = await service.client.request('GET', `/book/${bookId}`, { token });
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject(VALID_BOOK);
    });

    it('a rejected POST stores nothing', async () => {
      await service.client.request('POST', '/book', { body: { ...VALID_BOOK, title: 'sneaky' } });
      await service.client.request('POST', '/book', { token: 'garbage', body: { ...VALID_BOOK, title: 'sneaky' } });
      const token = await service.client.token();
      const response = await service.client.request('GET', '/books', { token });
      expect((response.body.data as { title: string }[]).map((book) => book.title)).not.toContain('sneaky');
    });
  });

  describe('tokens: no clock leeway, even for a token already seen', () => {
    const service = useService(kind);

    it('a token is accepted until its exp and refused (401 "Invalid token") once exp has passed', async () => {
      const exp = nowSeconds() + 2;
      const token = await signHmac({ exp });
      const before = await service.client.request('GET', '/books', { token });
      expect(before.status).toBe(200);
      // Wait until exp is strictly in the past (exp is in whole seconds).
      await new Promise((resolve) => setTimeout(resolve, exp * 1000 - Date.now() + 1100));
      const after = await service.client.request('GET', '/books', { token });
      expectEnvelope(after, ...INVALID_TOKEN);
    });
  });
});
