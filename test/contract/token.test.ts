// POST /token (docs/api.md "POST /token", "Authentication"): correct credentials → a token,
// wrong ones → 401, an unreadable payload → 400; the token's properties (HS256, the only claim
// exp, 15 minutes) and the failed-login limit (docs/operations.md "Security").
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { concurrentLogins, countStatuses, expectAtMostLimitRevealed } from '../helpers/client/concurrent-logins.js';
import { portOf } from '../helpers/client/raw-http.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { TEST_PASSWORD, TEST_SECRET, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';

forEachStore((kind) => {
  describe('POST /token', () => {
    const service = useService(kind);

    it('correct credentials → 200 "Token generated successfully" with data.token', async () => {
      const response = await service.client.request('POST', '/token', {
        body: { username: TEST_USERNAME, password: TEST_PASSWORD },
      });
      expect(response.status).toBe(200);
      expect(response.body).toEqual({
        status: 200,
        message: 'Token generated successfully',
        data: { token: expect.any(String) },
      });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('cache-control')).toBe('no-store');
    });

    it('the token is HS256, signed with SECRET_TOKEN, and its only claim is exp = time of issue + 900 s', async () => {
      const before = Math.floor(Date.now() / 1000);
      const token = await service.client.token();
      const after = Math.floor(Date.now() / 1000);
      expect(decodeProtectedHeader(token).alg).toBe('HS256');
      const { payload } = await jwtVerify(token, new TextEncoder().encode(TEST_SECRET), { algorithms: ['HS256'] });
      expect(Object.keys(payload)).toEqual(['exp']);
      expect(payload.exp).toBeGreaterThanOrEqual(before + 900);
      expect(payload.exp).toBeLessThanOrEqual(after + 900);
      expect(Number.isInteger(decodeJwt(token).exp)).toBe(true);
    });

    it('wrong password → 401 "Invalid credentials"', async () => {
      const response = await service.client.request('POST', '/token', {
        body: { username: TEST_USERNAME, password: 'wrong' },
      });
      expect(response.status).toBe(401);
      expect(response.body).toEqual({ status: 401, message: 'Invalid credentials', data: null });
      // Every 401 names a scheme (RFC 9110 §11.6.1); the login's credentials are in the body, so no error code.
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="book-collection"');
    });

    it('wrong username → 401 "Invalid credentials"', async () => {
      const response = await service.client.request('POST', '/token', {
        body: { username: 'someone', password: TEST_PASSWORD },
      });
      expect(response.body).toEqual({ status: 401, message: 'Invalid credentials', data: null });
    });

    it.each([
      ['malformed JSON', '{"username":'],
      ['an empty body', ''],
      ['a JSON array', '[]'],
      ['a JSON string', '"admin"'],
      ['null', 'null'],
      ['a missing password', JSON.stringify({ username: TEST_USERNAME })],
      ['a missing username', JSON.stringify({ password: TEST_PASSWORD })],
      ['a numeric password', JSON.stringify({ username: TEST_USERNAME, password: 1234 })],
      ['a null username', JSON.stringify({ username: null, password: TEST_PASSWORD })],
    ])('%s → 400 "Invalid request payload"', async (_name, body) => {
      const response = await service.client.request('POST', '/token', {
        body,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ status: 400, message: 'Invalid request payload', data: null });
    });

    // Correct credentials beside the key: only the key can make these a 400 (the login body
    // allows other fields), written plainly and as escapes, which decode to the same key.
    it.each([
      ['__proto__', '"__proto__":{"isAdmin":true}'],
      ['escaped __proto__', '"\\u005f\\u005fproto__":{"isAdmin":true}'],
      ['partly escaped __proto__', '"__pr\\u006fto__":{"isAdmin":true}'],
      ['constructor.prototype', '"constructor":{"prototype":{"isAdmin":true}}'],
      ['escaped constructor.prototype', '"constructo\\u0072":{"prototyp\\u0065":{"isAdmin":true}}'],
      ['nested __proto__', '"extra":[{"a":{"__proto__":{"isAdmin":true}}}]'],
    ])('correct credentials with a %s key → 400 "Invalid request payload"', async (_name, member) => {
      const response = await service.client.request('POST', '/token', {
        body: `{"username":${JSON.stringify(TEST_USERNAME)},"password":${JSON.stringify(TEST_PASSWORD)},${member}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(400);
      expect(response.body).toEqual({ status: 400, message: 'Invalid request payload', data: null });
    });

    it('a key that only resembles them is an ordinary field: correct credentials → 200', async () => {
      const response = await service.client.request('POST', '/token', {
        body: `{"username":${JSON.stringify(TEST_USERNAME)},"password":${JSON.stringify(TEST_PASSWORD)},"constructor":{"name":"x"},"proto":1}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(response.status).toBe(200);
    });

    it('a body without Content-Type is still parsed as JSON', async () => {
      const response = await fetch(`${service.current.baseUrl}/token`, {
        method: 'POST',
        body: new TextEncoder().encode(JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD })),
      });
      expect(response.status).toBe(200);
    });

    it('a body sent as text/plain is still parsed as JSON', async () => {
      const response = await service.client.request('POST', '/token', {
        body: JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }),
        headers: { 'content-type': 'text/plain' },
      });
      expect(response.status).toBe(200);
    });
  });

  describe('failed-login limit (LOGIN_RATE_LIMIT=3)', () => {
    const service = useService(kind, { LOGIN_RATE_LIMIT: '3' });

    it('after 3 failures every attempt, a correct one too, gets 429 "Too many requests" with Retry-After', async () => {
      const correct = { username: TEST_USERNAME, password: TEST_PASSWORD };
      // Successful logins do not count toward the limit.
      for (let i = 0; i < 5; i++) expect((await service.client.request('POST', '/token', { body: correct })).status).toBe(200);
      for (let i = 0; i < 3; i++) {
        const response = await service.client.request('POST', '/token', { body: { ...correct, password: `x${i}` } });
        expect(response.status).toBe(401);
      }
      for (const body of [{ ...correct, password: 'wrong' }, correct, '{']) {
        const response = await service.client.request('POST', '/token', { body });
        expect(response.status).toBe(429);
        expect(response.body).toEqual({ status: 429, message: 'Too many requests', data: null });
        const retryAfter = Number(response.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThan(0);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }
    });

    it('other endpoints are not limited', async () => {
      const response = await service.client.request('GET', '/books');
      expect(response.status).toBe(401);
    });
  });

  // Logins that arrive together are decided one at a time: N concurrent guesses from one
  // address learn at most LOGIN_RATE_LIMIT password outcomes, and correct logins never take
  // each other's place. Every attempt's headers go first, its body later (concurrentLogins).
  describe('failed-login limit under concurrency (LOGIN_RATE_LIMIT=5)', () => {
    const LIMIT = 5;
    const service = useService(kind, { LOGIN_RATE_LIMIT: String(LIMIT), TRUST_PROXY: 'true' });
    // One client address per test (X-Forwarded-For, trusted here), so no test's count reaches another.
    let nextAddress = 1;
    const freshAddress = () => `10.1.0.${nextAddress++}`;
    const logins = (passwords: string[], address: string) => concurrentLogins(passwords, { address, ports: [portOf(service.current.baseUrl)] });

    it('200 concurrent wrong passwords from one address: at most 5 answer 401, the rest 429 with Retry-After; then a correct login is 429', async () => {
      const address = freshAddress();
      const answers = await logins(Array.from({ length: 200 }, (_, i) => `wrong-${i}`), address);
      expectAtMostLimitRevealed(answers, LIMIT);
      const [correct] = await logins([TEST_PASSWORD], address);
      expect(correct?.status).toBe(429);
      expect(Number(correct?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    });

    it('50 concurrent correct logins from one address, with no failure before: all 200', async () => {
      const answers = await logins(Array<string>(50).fill(TEST_PASSWORD), freshAddress());
      expect(countStatuses(answers)).toEqual({ 200: 50 });
    });
  });

  describe('LOGIN_RATE_LIMIT=0 turns the limit off', () => {
    const service = useService(kind, { LOGIN_RATE_LIMIT: '0' });

    it('20 failures in a row all answer 401', async () => {
      for (let i = 0; i < 20; i++) {
        const response = await service.client.request('POST', '/token', { body: { username: 'a', password: 'b' } });
        expect(response.status).toBe(401);
      }
    });
  });
});
