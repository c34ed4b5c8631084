// CORS (README "Configuration": CORS_ORIGINS, off by default; preflight allows Authorization,
// Content-Type and X-Request-Id) and logs (docs/operations.md "Logs": one pino JSON line per finished
// request with reqId, method, route, url, status, durationMs; X-Request-Id of 1–128 characters
// of `A-Z a-z 0-9 . _ : @ / + = -` is used and echoed, anything else replaced by a UUID;
// Authorization headers, passwords, tokens and the secret are never logged).
// Neither depends on the store: SQLite only.
import { describe, expect, it } from 'vitest';
import { ApiClient, type ApiResponse } from '../helpers/client/api-client.js';
import { TEST_SECRET, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';

const APP_ORIGIN = 'https://app.example';
const OTHER_ORIGIN = 'https://evil.example';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** One request through the test client, with the headers and raw body given. */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<ApiResponse> {
  return new ApiClient(baseUrl).request(method, path, { headers, body });
}

/** Comma-separated header value → lower-cased items. */
function headerList(headers: Headers, name: string): string[] {
  return (headers.get(name) ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter(Boolean);
}

function preflight(baseUrl: string, path: string, origin: string, method: string, requestHeaders: string) {
  return send(baseUrl, 'OPTIONS', path, {
    origin,
    'access-control-request-method': method,
    'access-control-request-headers': requestHeaders,
  });
}

type LogLine = Record<string, unknown>;

/** Every log line, parsed (each must be JSON). */
function logLines(logs: string[]): LogLine[] {
  return logs
    .join('')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        return JSON.parse(line) as LogLine;
      } catch {
        throw new Error(`a log line that is not JSON: ${line}`);
      }
    });
}

/** The completion lines (`status` + `durationMs`) of the request `reqId`, once the service wrote them. */
async function completionLines(logs: string[], reqId: string, atLeast = 1): Promise<LogLine[]> {
  const find = () => logLines(logs).filter((line) => line.reqId === reqId && 'status' in line && 'durationMs' in line);
  // A line goes out at the end of the event-loop turn that logged it: it may trail the answer.
  await expect.poll(() => find().length).toBeGreaterThanOrEqual(atLeast);
  return find();
}

describe('CORS_ORIGINS=https://app.example', () => {
  const service = useService('sqlite', { CORS_ORIGINS: APP_ORIGIN });

  it('preflight OPTIONS /books (GET, authorization) → 204 with Allow-Origin, Allow-Methods and Allow-Headers', async () => {
    const response = await preflight(service.current.baseUrl, '/books', APP_ORIGIN, 'GET', 'authorization');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(headerList(response.headers, 'access-control-allow-headers')).toContain('authorization');
    expect(headerList(response.headers, 'access-control-allow-methods')).toContain('get');
  });

  it('preflight POST /book with authorization, content-type, x-request-id → all three allowed', async () => {
    const response = await preflight(service.current.baseUrl, '/book', APP_ORIGIN, 'POST', 'authorization,content-type,x-request-id');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const allowed = headerList(response.headers, 'access-control-allow-headers');
    for (const header of ['authorization', 'content-type', 'x-request-id']) expect(allowed).toContain(header);
    expect(headerList(response.headers, 'access-control-allow-methods')).toContain('post');
  });

  it('preflight PUT and DELETE /book/:id are allowed too', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const response = await preflight(service.current.baseUrl, '/book/1', APP_ORIGIN, method, 'authorization');
      expect(response.status, method).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), method).toBe(APP_ORIGIN);
      expect(headerList(response.headers, 'access-control-allow-methods'), method).toContain(method.toLowerCase());
    }
  });

  it('actual GET /books with Origin → Access-Control-Allow-Origin, and Vary: Origin for caches', async () => {
    const token = await service.client.token();
    const response = await send(service.current.baseUrl, 'GET', '/books', { origin: APP_ORIGIN, authorization: token });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(headerList(response.headers, 'vary')).toContain('origin');
  });

  it('an error answer (401) carries Access-Control-Allow-Origin too, so the browser app can read it', async () => {
    const response = await send(service.current.baseUrl, 'GET', '/books', { origin: APP_ORIGIN });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    // The page's script may read the challenge as well as the list's headers.
    const exposed = headerList(response.headers, 'access-control-expose-headers');
    for (const header of ['www-authenticate', 'link', 'x-total-count', 'x-total-count-estimate', 'etag', 'retry-after']) expect(exposed).toContain(header);
  });

  it('a disallowed origin gets no Access-Control-Allow-Origin, on the preflight and on the request', async () => {
    const before = await preflight(service.current.baseUrl, '/books', OTHER_ORIGIN, 'GET', 'authorization');
    expect(before.headers.get('access-control-allow-origin')).toBeNull();
    const token = await service.client.token();
    const response = await send(service.current.baseUrl, 'GET', '/books', { origin: OTHER_ORIGIN, authorization: token });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('an origin that only starts like the allowed one gets nothing (https://app.example.evil.test)', async () => {
    const response = await send(service.current.baseUrl, 'GET', '/books', { origin: `${APP_ORIGIN}.evil.test` });
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS_ORIGINS with two origins', () => {
  const service = useService('sqlite', { CORS_ORIGINS: `${APP_ORIGIN}, https://admin.example` });

  it('each listed origin is allowed, and only that one is echoed', async () => {
    for (const origin of [APP_ORIGIN, 'https://admin.example']) {
      const response = await preflight(service.current.baseUrl, '/books', origin, 'GET', 'authorization');
      expect(response.status, origin).toBe(204);
      expect(response.headers.get('access-control-allow-origin'), origin).toBe(origin);
    }
    const other = await send(service.current.baseUrl, 'GET', '/books', { origin: OTHER_ORIGIN });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('CORS off (default)', () => {
  const service = useService('sqlite');

  it('GET /books with an Origin gets no Access-Control-Allow-Origin', async () => {
    const token = await service.client.token();
    const response = await send(service.current.baseUrl, 'GET', '/books', { origin: APP_ORIGIN, authorization: token });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('a preflight gets no CORS headers', async () => {
    const response = await preflight(service.current.baseUrl, '/books', APP_ORIGIN, 'GET', 'authorization');
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
    expect(response.headers.get('access-control-allow-headers')).toBeNull();
    expect(response.headers.get('access-control-allow-methods')).toBeNull();
  });
});

describe('request logs', () => {
  const service = useService('sqlite');

  it('one JSON line per finished request with method, route, url, status, durationMs and reqId', async () => {
    const token = await service.client.token();
    const reqId = `ops-log-${Date.now()}`;
    const response = await send(service.current.baseUrl, 'GET', '/book/987654', { authorization: token, 'x-request-id': reqId });
    expect(response.status).toBe(404);
    const lines = await completionLines(service.current.logs, reqId);
    expect(lines).toHaveLength(1);
    const line = lines[0] as LogLine;
    expect(line).toMatchObject({ reqId, method: 'GET', route: '/book/:id', url: '/book/987654', status: 404 });
    expect(typeof line.durationMs).toBe('number');
    expect(line.durationMs as number).toBeGreaterThanOrEqual(0);
    expect(line.durationMs as number).toBeLessThan(10_000);
    expect(typeof line.time).toBe('number');
    expect(typeof line.level).toBe('number');
  });

  it('every kind of outcome gets its line: 200, 201, 401, 404 unknown route, 405', async () => {
    const token = await service.client.token();
    const cases: Array<[string, string, Record<string, string>, string | undefined, number]> = [
      ['GET', '/books', { authorization: token }, undefined, 200],
      ['POST', '/book', { authorization: token, 'content-type': 'application/json' }, '{"title":"T","author":"A","year":1}', 201],
      ['GET', '/books', {}, undefined, 401],
      ['GET', '/no/such/route', {}, undefined, 404],
      ['PATCH', '/books', {}, undefined, 405],
    ];
    for (const [index, [method, path, headers, body, status]] of cases.entries()) {
      const reqId = `ops-kind-${index}-${Date.now()}`;
      const response = await send(service.current.baseUrl, method, path, { ...headers, 'x-request-id': reqId }, body);
      expect(response.status, `${method} ${path}`).toBe(status);
      const lines = await completionLines(service.current.logs, reqId);
      expect(lines, `${method} ${path}`).toHaveLength(1);
      expect(lines[0], `${method} ${path}`).toMatchObject({ reqId, method, status, url: path });
    }
  });

  it.each([
    { name: 'an undecodable id, /book/%zz', path: '/book/%zz', status: 401 },
    { name: 'an undecodable path, /%zz', path: '/%zz', status: 400 },
    { name: 'an id too long for the router, /book/<200 digits>', path: `/book/${'9'.repeat(200)}`, status: 401 },
  ])('a URL the router refuses ($name) still gets its X-Request-Id and its log line', async ({ path, status }) => {
    const reqId = `ops-bad-url-${path.length}-${Date.now()}`;
    const response = await send(service.current.baseUrl, 'GET', path, { 'x-request-id': reqId });
    expect(response.status).toBe(status);
    expect(response.headers.get('x-request-id')).toBe(reqId);
    const lines = await completionLines(service.current.logs, reqId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId, method: 'GET', status });
  });

  it.each<[string, string, string, string]>([
    ['POST', '/book', '{"title":"Dune","author":"Frank Herbert","year":"1965"}', 'year: must be of type integer'],
    ['POST', '/book', '{"title":"Dune","year":1965}', 'author: required'],
    ['POST', '/book', '{"title":"Dune","author":"Frank Herbert","year":12000}', 'year: must be <= 9999'],
    ['POST', '/book', '{"title":"   ","author":"Frank Herbert","year":1965}', 'title: must contain a non-space character, and no NUL or lone surrogate'],
    ['POST', '/book', `{"title":"${'x'.repeat(501)}","author":"A","year":1}`, 'title: must have at most 500 characters'],
    ['POST', '/book', '[1,2]', 'body: must be a JSON object'],
    ['POST', '/book', '{"title":', 'body: not valid JSON, or a forbidden __proto__ / constructor.prototype key'],
    ['POST', '/book', '', 'body: empty'],
    ['POST', '/token', '{"username":"admin","password":987654321987}', 'password: must be of type string'],
  ])('a refused body: %s %s %s → 400, and its log line (info) says which field failed and why: %s', async (method, path, body, invalid) => {
    const token = await service.client.token();
    const reqId = `ops-invalid-${Math.random().toString(36).slice(2)}`;
    const response = await send(service.current.baseUrl, method, path, { authorization: token, 'content-type': 'application/json', 'x-request-id': reqId }, body);
    expect(response.status).toBe(400);
    const lines = await completionLines(service.current.logs, reqId);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ reqId, status: 400, level: 30, invalid });
    // The value sent never reaches the log (it could be a password).
    expect(service.current.logs.join('')).not.toContain('987654321987');
  });

  it('every line the service writes is JSON', () => {
    expect(logLines(service.current.logs).length).toBeGreaterThan(0);
  });

  it('a valid X-Request-Id is echoed and used as reqId; without one, a fresh UUID per request', async () => {
    const valid = 'A-Za-z0-9._:@/+=-'.padEnd(128, 'x');
    expect(valid).toHaveLength(128);
    for (const given of ['abc-123', valid, 'trace:span/7+x=y@host_1.2']) {
      const response = await send(service.current.baseUrl, 'GET', '/healthz', { 'x-request-id': given });
      expect(response.headers.get('x-request-id')).toBe(given);
      expect(await completionLines(service.current.logs, given)).toHaveLength(1);
    }
    const first = (await send(service.current.baseUrl, 'GET', '/healthz')).headers.get('x-request-id') ?? '';
    const second = (await send(service.current.baseUrl, 'GET', '/healthz')).headers.get('x-request-id') ?? '';
    expect(first).toMatch(UUID);
    expect(second).toMatch(UUID);
    expect(first).not.toBe(second);
    expect(await completionLines(service.current.logs, first)).toHaveLength(1);
  });

  it.each([
    ['300 characters', 'a'.repeat(300)],
    ['129 characters', 'b'.repeat(129)],
    ['spaces', 'has spaces in it'],
    ['markup', '<script>alert(1)</script>'],
    ['a quote and a comma', 'a"b,c'],
    ['non-ASCII (sent as UTF-8 bytes)', 'caf\u00c3\u00a9'],
  ])('an invalid X-Request-Id (%s) is replaced by a generated id, echoed and logged', async (_name, given) => {
    const response = await send(service.current.baseUrl, 'GET', '/healthz', { 'x-request-id': given });
    expect(response.status).toBe(200);
    const echoed = response.headers.get('x-request-id') ?? '';
    expect(echoed).not.toBe(given);
    expect(echoed).toMatch(UUID);
    expect(await completionLines(service.current.logs, echoed)).toHaveLength(1);
    expect(logLines(service.current.logs).filter((line) => line.reqId === given)).toEqual([]);
  });
});

describe('secrets never reach the logs (LOG_LEVEL=trace)', () => {
  const PASSWORD = 'Correct-Horse-7f3a9c-battery';
  const service = useService('sqlite', { LOG_LEVEL: 'trace', AUTH_PASSWORD: PASSWORD, LOGIN_RATE_LIMIT: '0' });

  it('no Authorization value, password, token or secret appears in any log line', async () => {
    const { baseUrl } = service.current;
    const json = { 'content-type': 'application/json' };
    const wrongPassword = 'Wrong-Password-0d1e2f-staple';
    const brokenPassword = 'Broken-Body-Password-5a6b7c';
    const typedPassword = 'Typed-Body-Password-8d9e0f';
    const bogusToken = 'Bogus-Token-Value-1a2b3c4d';

    const login = await send(baseUrl, 'POST', '/token', json, JSON.stringify({ username: TEST_USERNAME, password: PASSWORD }));
    expect(login.status).toBe(200);
    const token = (JSON.parse(login.text) as { data: { token: string } }).data.token;

    const outcomes = [
      await send(baseUrl, 'POST', '/token', json, JSON.stringify({ username: TEST_USERNAME, password: wrongPassword })),
      await send(baseUrl, 'POST', '/token', json, `{"username":"${TEST_USERNAME}","password":"${brokenPassword}"`),
      await send(baseUrl, 'POST', '/token', json, JSON.stringify({ username: [1], password: typedPassword })),
      await send(baseUrl, 'GET', '/books', { authorization: token }),
      await send(baseUrl, 'GET', '/books', { authorization: `Bearer ${token}` }),
      await send(baseUrl, 'GET', '/books', { authorization: bogusToken }),
      await send(baseUrl, 'GET', '/books', { authorization: `Bearer ${bogusToken}` }),
      await send(baseUrl, 'POST', '/book', { ...json, authorization: token }, '{"title":'),
      await send(baseUrl, 'GET', '/book/%zz', { authorization: bogusToken }),
    ];
    expect(outcomes.map((outcome) => outcome.status)).toEqual([401, 400, 400, 200, 200, 401, 401, 400, 401]);

    // Wait until all ten requests have their completion line (so the check below is not
    // vacuous), then look at everything the service wrote.
    await expect.poll(() => logLines(service.current.logs).filter((line) => 'status' in line).length).toBeGreaterThanOrEqual(10);
    const logs = service.current.logs.join('');
    const secrets: Record<string, string> = {
      'the correct password': PASSWORD,
      'a wrong password': wrongPassword,
      'the password of an unreadable body': brokenPassword,
      'the password of a mistyped body': typedPassword,
      'an issued token': token,
      "the token's signature": token.split('.')[2] ?? token,
      'an invalid Authorization value': bogusToken,
      'the signing secret': TEST_SECRET,
    };
    for (const [what, secret] of Object.entries(secrets)) expect(logs.includes(secret), `${what} is in the logs`).toBe(false);
    expect(logs).not.toMatch(/bearer /i);
  });
});
