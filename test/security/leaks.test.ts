// Nothing internal in a response, nothing secret in the log (docs/operations.md "Security": error bodies
// hold only the fixed messages, SQL, stack traces and driver messages go to the log only; the
// log never contains the Authorization header, passwords, tokens or SECRET_TOKEN).
// A battery of bad requests (malformed and poisoned bodies, SQL in ids and fields, forged
// tokens, oversize and malformed requests) and a store whose table has vanished (a real
// driver error) must answer with fixed envelopes only; after logins good and bad and
// authenticated requests (raw and Bearer) at LOG_LEVEL=trace, the captured log holds
// neither the password, nor SECRET_TOKEN, nor any token, nor a failed login's password.
import { beforeAll, describe, expect, it } from 'vitest';
import { hmacToken, nowSeconds, unsecuredToken } from '../helpers/client/tokens.js';
import { portOf, rawRequest, type RawRequest, type RawResponse } from '../helpers/client/raw-http.js';
import { TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';
import { expectEnvelopeShape } from '../helpers/client/envelope.js';
import { execInTestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

const PASSWORD = 'pw-canary-7Hq2-Zx91-do-not-log';
const SECRET = 'secret-canary-0f1e2d3c4b5a69788796a5b4c3d2e1f0-do-not-log';
const WRONG_PASSWORDS = ['wrong-canary-pw-1', `${PASSWORD}x`, PASSWORD.toUpperCase(), ` ${PASSWORD}`];
const JUNK_AUTHORIZATION = 'Bearer auth-header-canary-9f8e7d6c5b4a';

/** Text that betrays internals: SQL, driver and engine names, stack frames, paths, JS error names. */
const INTERNALS = [
  /\bselect\b.*\bfrom\b/i,
  /\binsert\s+into\b/i,
  /\bupdate\s+\S+\s+set\b/i,
  /\bdelete\s+from\b/i,
  /\breturning\b/i,
  /sqlite|postgres|\bpg\b|mysql|mariadb|kysely|better-sqlite3/i,
  /syntax error|constraint|violates|relation "|no such (table|column)|doesn't exist|does not exist|SQLSTATE|\bER_[A-Z_]+/i,
  /ECONN|EPIPE|ETIMEDOUT/,
  / {4}at /,
  /\bat \S+ \(/,
  /node_modules|\/work\/|\/src\/|\/dist\/|\/test\/|file:\/\/|\.[cm]?[jt]s:\d+/,
  /\b(Type|Syntax|Range|Reference)Error\b|\bError:/,
  /\[object Object\]|\bundefined\b|\bNaN\b/,
  /FST_[A-Z_]+|HPE_[A-Z_]+|ERR_[A-Z_]+/,
];

function expectNoInternals(response: RawResponse, context: string) {
  const text = `${JSON.stringify(response.headers)}\n${response.body}`;
  for (const pattern of INTERNALS) expect(text, `${context}: ${pattern} in ${text.slice(0, 600)}`).not.toMatch(pattern);
  for (const secret of [PASSWORD, SECRET, ...WRONG_PASSWORDS]) expect(text, `${context}: a secret in the response`).not.toContain(secret);
}

forEachStore((kind) => {
  describe('no internals in responses, no secrets in logs', () => {
    const service = useService(kind, { AUTH_PASSWORD: PASSWORD, SECRET_TOKEN: SECRET, LOG_LEVEL: 'trace', LOGIN_RATE_LIMIT: '0' });
    const issued: string[] = [];
    let port: number;
    let token: string;
    let bookId: number;

    async function send(request: RawRequest): Promise<RawResponse> {
      const exchange = await rawRequest(port, request);
      expect(exchange.response, `${request.method} ${request.path.slice(0, 80)}: no response`).toBeDefined();
      return exchange.response!;
    }

    async function login(password: string): Promise<RawResponse> {
      const response = await send({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json']], body: JSON.stringify({ username: TEST_USERNAME, password }) });
      if (response.status === 200) issued.push((JSON.parse(response.body) as { data: { token: string } }).data.token);
      return response;
    }

    beforeAll(async () => {
      port = portOf(service.current.baseUrl);
      const response = await login(PASSWORD);
      expect(response.status).toBe(200);
      token = issued[0]!;
      const created = await send({ method: 'POST', path: '/book', headers: [['Authorization', token]], body: JSON.stringify({ title: 'Leaks', author: 'L. Eak', year: 2000 }) });
      bookId = (JSON.parse(created.body) as { data: { id: number } }).data.id;
    });

    const forged = () => ({
      wrongSecret: hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify({ exp: nowSeconds() + 900 }), { secret: 'another-secret-of-at-least-32-bytes!!' }),
      expired: hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify({ exp: nowSeconds() - 10 }), { secret: SECRET }),
      noExp: hmacToken({ alg: 'HS256', typ: 'JWT' }, JSON.stringify({ sub: 'x' }), { secret: SECRET }),
      badPayload: hmacToken({ alg: 'HS256', typ: 'JWT' }, 'not json', { secret: SECRET }),
      algNone: unsecuredToken({ exp: nowSeconds() + 900 }),
      rs: hmacToken({ alg: 'RS256', typ: 'JWT' }, JSON.stringify({ exp: nowSeconds() + 900 }), { secret: SECRET }),
    });

    const battery = (): Array<[string, RawRequest]> => {
      const auth: Array<[string, string]> = [['Authorization', token]];
      const json: Array<[string, string]> = [['Content-Type', 'application/json']];
      const tokens = forged();
      return [
        ['malformed JSON', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":"a",' }],
        ['JSON with a NUL byte', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":"a\u0000","author":"b","year":1}' }],
        ['wrong types', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":["a"],"author":{"x":1},"year":"1999"}' }],
        ['year 1e400', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":"a","author":"b","year":1e400}' }],
        ['title with NUL (escaped)', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":"a\\u0000b","author":"b","year":1}' }],
        ['title with a lone surrogate', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"title":"\\ud800","author":"b","year":1}' }],
        ['title of 501 characters', { method: 'POST', path: '/book', headers: [...auth, ...json], body: JSON.stringify({ title: 'x'.repeat(501), author: 'b', year: 1 }) }],
        ['__proto__ body', { method: 'POST', path: '/book', headers: [...auth, ...json], body: '{"__proto__":{"polluted":1},"title":"a","author":"b","year":1}' }],
        ['constructor.prototype body', { method: 'PUT', path: `/book/${bookId}`, headers: [...auth, ...json], body: '{"constructor":{"prototype":{"x":1}}}' }],
        ['PUT wrong types', { method: 'PUT', path: `/book/${bookId}`, headers: [...auth, ...json], body: '{"year":99999999999999999999}' }],
        ['login with numbers', { method: 'POST', path: '/token', headers: json, body: '{"username":1,"password":2}' }],
        ['login malformed', { method: 'POST', path: '/token', headers: json, body: '{' }],
        ['SQL in the id', { method: 'GET', path: "/book/1%20OR%201=1", headers: auth }],
        ['SQL in the id (quote)', { method: 'GET', path: "/book/1'%20OR%20''='", headers: auth }],
        ['SQL in the id (UNION)', { method: 'DELETE', path: '/book/1%20UNION%20SELECT%20*%20FROM%20books', headers: auth }],
        ['SQL in the id (stacked)', { method: 'PUT', path: '/book/1;DROP%20TABLE%20books', headers: [...auth, ...json], body: '{}' }],
        ['id beyond 64 bits', { method: 'GET', path: '/book/99999999999999999999999999999', headers: auth }],
        ['id of 5,000 digits', { method: 'GET', path: `/book/${'9'.repeat(5000)}`, headers: auth }],
        ['negative id', { method: 'DELETE', path: '/book/-1', headers: auth }],
        ['undecodable id', { method: 'GET', path: '/book/%zz', headers: auth }],
        ['NUL in the id', { method: 'GET', path: '/book/%00', headers: auth }],
        ['invalid UTF-8 in the id', { method: 'GET', path: '/book/%C0%AF%FF', headers: auth }],
        ['undecodable path', { method: 'GET', path: '/%zz' }],
        ['unknown route', { method: 'GET', path: '/admin/../../etc/passwd' }],
        ['traversal under /docs', { method: 'GET', path: '/docs/static/..%2f..%2f..%2fpackage.json' }],
        ['traversal under /docs (dots encoded)', { method: 'GET', path: '/docs/static/%2e%2e%2f%2e%2e%2f%2e%2e%2f.env' }],
        ['traversal under /docs (raw)', { method: 'GET', path: '/docs/../../src/config.ts' }],
        ['traversal under /docs (double slash)', { method: 'GET', path: '/docs/static/....//....//etc/passwd' }],
        ['wrong method', { method: 'PATCH', path: `/book/${bookId}`, headers: auth }],
        ['no token', { method: 'GET', path: '/books' }],
        ['junk token', { method: 'GET', path: '/books', headers: [['Authorization', JUNK_AUTHORIZATION]] }],
        ['token with SQL', { method: 'GET', path: '/books', headers: [['Authorization', "' OR 1=1 --"]] }],
        ['token signed with another secret', { method: 'GET', path: '/books', headers: [['Authorization', tokens.wrongSecret]] }],
        ['expired token', { method: 'GET', path: '/books', headers: [['Authorization', tokens.expired]] }],
        ['token without exp', { method: 'GET', path: '/books', headers: [['Authorization', tokens.noExp]] }],
        ['token whose payload is not JSON', { method: 'GET', path: '/books', headers: [['Authorization', tokens.badPayload]] }],
        ['alg none token', { method: 'GET', path: '/books', headers: [['Authorization', tokens.algNone]] }],
        ['RS256 header, HMAC signature', { method: 'GET', path: '/books', headers: [['Authorization', `Bearer ${tokens.rs}`]] }],
        ['body over 1 MiB', { method: 'POST', path: '/book', headers: [...auth, ...json], body: 'x'.repeat(1024 * 1024 + 1) }],
        ['unreadable Content-Type', { method: 'POST', path: '/book', headers: [...auth, ['Content-Type', ';;;']], body: '{}' }],
        ['headers over 16 KiB', { method: 'GET', path: '/books', headers: [['X-Big', 'a'.repeat(20 * 1024)]] }],
        ['malformed request line', { method: 'GET /books', path: 'HTTP/1.1' }],
        ['bad header byte', { method: 'GET', path: '/books', headers: [['X-Bad', 'a\u0001b']] }],
        ['Content-Length and Transfer-Encoding', { method: 'POST', path: '/book', headers: [...auth, ['Transfer-Encoding', 'chunked'], ['Content-Length', '3']], body: '0\r\n\r\n' }],
      ];
    };

    it('a battery of bad requests: fixed envelopes only, no SQL, stack, driver text, paths or secrets', async () => {
      for (const [name, request] of battery()) {
        const response = await send(request);
        expect(response.status, `${name}: ${response.body}`).toBeGreaterThanOrEqual(400);
        expectEnvelopeShape(response, name);
        expectNoInternals(response, name);
      }
    });

    it('SQL metacharacters in fields are data: stored and read back verbatim, the table intact', async () => {
      const hostile = {
        title: "Robert'); DROP TABLE books;--",
        author: '" OR ""="; SELECT * FROM book_service_migrations; \\ % _ `x`',
        year: 1,
      };
      const created = await send({ method: 'POST', path: '/book', headers: [['Authorization', token]], body: JSON.stringify(hostile) });
      expect(created.status, created.body).toBe(201);
      const id = (JSON.parse(created.body) as { data: { id: number } }).data.id;
      const read = await send({ method: 'GET', path: `/book/${id}`, headers: [['Authorization', token]] });
      expect(JSON.parse(read.body)).toEqual({ status: 200, message: 'Book retrieved successfully', data: { id, ...hostile } });
      const list = await send({ method: 'GET', path: '/books', headers: [['Authorization', token]] });
      expect(list.status).toBe(200);
      expect((JSON.parse(list.body) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(2);
    });

    it('a store error (the books table vanishes): 500/503 envelope without driver text; the details reach the log only', async () => {
      const testStore = service.current.testStore;
      const auth: Array<[string, string]> = [['Authorization', token]];
      const hidden = kind === 'mysql' ? 'RENAME TABLE books TO books_hidden' : 'ALTER TABLE books RENAME TO books_hidden';
      const restore = kind === 'mysql' ? 'RENAME TABLE books_hidden TO books' : 'ALTER TABLE books_hidden RENAME TO books';
      const logsBefore = service.current.logs.length;
      await execInTestStore(testStore, hidden);
      try {
        const requests: Array<[string, RawRequest]> = [
          ['GET /books', { method: 'GET', path: '/books', headers: auth }],
          ['GET /book/:id', { method: 'GET', path: `/book/${bookId}`, headers: auth }],
          ['POST /book', { method: 'POST', path: '/book', headers: auth, body: JSON.stringify({ title: 'a', author: 'b', year: 1 }) }],
          ['PUT /book/:id', { method: 'PUT', path: `/book/${bookId}`, headers: auth, body: '{"year":3}' }],
          ['DELETE /book/:id', { method: 'DELETE', path: `/book/${bookId}`, headers: auth }],
        ];
        for (const [name, request] of requests) {
          const response = await send(request);
          expect([500, 503], `${name}: ${response.body}`).toContain(response.status);
          const envelope = expectEnvelopeShape(response, name, { allowServerError: true });
          expect(['Internal server error', 'Service unavailable']).toContain(envelope.message);
          expectNoInternals(response, name);
        }
      } finally {
        await execInTestStore(testStore, restore);
      }
      const logged = service.current.logs.slice(logsBefore).join('');
      expect(logged, 'the cause of a 500 must be in the log').toMatch(/no such table|does not exist|doesn't exist/i);
      // Recovered once the table is back.
      const after = await send({ method: 'GET', path: `/book/${bookId}`, headers: auth });
      expect(after.status, after.body).toBe(200);
    });

    it('after good and bad logins, raw and Bearer requests and errors, the log holds no password, secret or token', async () => {
      for (const password of WRONG_PASSWORDS) expect((await login(password)).status).toBe(401);
      for (let i = 0; i < 3; i++) expect((await login(PASSWORD)).status).toBe(200);
      for (const current of issued) {
        for (const authorization of [current, `Bearer ${current}`, `bearer\t${current}`]) {
          const auth: Array<[string, string]> = [['Authorization', authorization]];
          expect((await send({ method: 'GET', path: '/books', headers: auth })).status).toBe(200);
          expect((await send({ method: 'GET', path: `/book/${bookId}`, headers: auth })).status).toBe(200);
          expect((await send({ method: 'PUT', path: `/book/${bookId}`, headers: auth, body: '{"year":2001}' })).status).toBe(200);
          expect((await send({ method: 'POST', path: '/book', headers: auth, body: '{"title":1}' })).status).toBe(400);
          expect((await send({ method: 'GET', path: '/book/8000000000000000000', headers: auth })).status).toBe(404);
        }
      }
      await send({ method: 'GET', path: '/books', headers: [['Authorization', JUNK_AUTHORIZATION]] });
      // A login body that cannot be read still carries a password.
      await send({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json']], body: `{"username":"${TEST_USERNAME}","password":"${PASSWORD}"` });
      await send({ method: 'POST', path: '/token', headers: [['Content-Type', 'application/json']], body: `{"username":"${TEST_USERNAME}","password":"${PASSWORD}","__proto__":{}}` });

      const logs = service.current.logs.join('');
      expect(logs, 'logging works').toMatch(/request completed/);
      expect(issued.length).toBeGreaterThanOrEqual(4);
      expect(logs, 'AUTH_PASSWORD in the log').not.toContain(PASSWORD);
      expect(logs, 'SECRET_TOKEN in the log').not.toContain(SECRET);
      for (const wrong of WRONG_PASSWORDS) expect(logs, `a failed login's password in the log: ${wrong}`).not.toContain(wrong.trim());
      for (const current of issued) {
        expect(logs, 'a token in the log').not.toContain(current);
        expect(logs, "a token's signature in the log").not.toContain(current.split('.')[2]);
      }
      expect(logs, 'an Authorization header in the log').not.toContain('auth-header-canary');
    });
  });
});
