// LOGIN_LIMIT_STORE=redis://… (docs/scaling-out.md): every instance counts failed logins in one
// place, so the 11th failure within a minute is refused on any instance, with the same rules
// as one process (429 with Retry-After for every login from that address, a correct one too).
// While Redis is down, logins are still answered (401/200/429, never 5xx) with a count per
// instance, and the shared count resumes when Redis is back.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { concurrentLogins, countStatuses, expectAtMostLimitRevealed } from '../helpers/client/concurrent-logins.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { createPrivateRedis, type PrivateRedis } from '../helpers/infra/redis-server.js';
import { portOf } from '../helpers/client/raw-http.js';
import { ApiClient } from '../helpers/client/api-client.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';
import { describeIf } from '../helpers/requirements.js';

const LIMIT = 10;

// Requirement: it starts Redis servers of its own; skipped (reason printed) only outside CI where redis-server is missing.
describeIf('redis-server')('failed-login limit shared through Redis, two instances', () => {
  let redis: PrivateRedis;
  let instances: InProcessService[] = [];
  let clients: ApiClient[] = [];

  beforeAll(async () => {
    redis = await createPrivateRedis();
    const env = { LOGIN_LIMIT_STORE: redis.url, LOGIN_RATE_LIMIT: String(LIMIT), TRUST_PROXY: 'true' };
    instances = [await startService({ kind: 'sqlite', env: env }), await startService({ kind: 'sqlite', env: env })];
    clients = instances.map((instance) => new ApiClient(instance.baseUrl));
  });
  afterAll(async () => {
    for (const instance of instances) await instance.stop();
    await redis?.stop();
  });
  beforeEach(async () => {
    await redis.start(); // again, if a test stopped it
  });

  // Each test counts for its own client address (X-Forwarded-For, trusted here), so no count
  // one test leaves behind, in Redis or in an instance's own fallback count, reaches another.
  let nextAddress = 1;
  const freshAddress = () => `10.0.${Math.floor(nextAddress / 250)}.${(nextAddress++ % 250) + 1}`;
  const login = (client: ApiClient, address: string, password: string) =>
    client.request('POST', '/token', { body: { username: TEST_USERNAME, password }, headers: { 'x-forwarded-for': address } });
  const wrong = (client: ApiClient, address: string) => login(client, address, 'wrong');
  const right = (client: ApiClient, address: string) => login(client, address, TEST_PASSWORD);

  it('10 failures spread over both instances: the 11th login is 429 on either, a correct one too', async () => {
    const [a, b] = clients as [ApiClient, ApiClient];
    const address = freshAddress();
    for (let i = 0; i < LIMIT; i++) expectEnvelope(await wrong(i % 2 === 0 ? a : b, address), 401, 'Invalid credentials', null);
    for (const client of [a, b]) {
      const refused = await wrong(client, address);
      expectEnvelope(refused, 429, 'Too many requests', null);
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expectEnvelope(await right(client, address), 429, 'Too many requests', null);
    }
    // Another address is not limited.
    expect((await right(a, freshAddress())).status).toBe(200);
  });

  it('below the limit nothing is refused, and correct logins do not count', async () => {
    const [a, b] = clients as [ApiClient, ApiClient];
    const address = freshAddress();
    for (let i = 0; i < LIMIT - 1; i++) expectEnvelope(await wrong(i % 2 === 0 ? a : b, address), 401, 'Invalid credentials', null);
    for (let i = 0; i < 5; i++) expect((await right(i % 2 === 0 ? a : b, address)).status).toBe(200);
    expectEnvelope(await wrong(b, address), 401, 'Invalid credentials', null); // the 10th failure
    expectEnvelope(await right(a, address), 429, 'Too many requests', null);
  });

  it('Redis down: logins are still answered (401, 200, then 429 per instance), never 5xx; back up: the shared count resumes', async () => {
    const [a, b] = clients as [ApiClient, ApiClient];
    await redis.stop();
    const address = freshAddress();
    expect((await right(a, address)).status).toBe(200);
    const statuses: number[] = [];
    for (let i = 0; i <= LIMIT; i++) statuses.push((await wrong(a, address)).status);
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(401), 429]); // counted by instance A alone
    expect((await right(b, address)).status).toBe(200); // B keeps its own count meanwhile

    await redis.start();
    // The instances reconnect by themselves; then the failures one counts limit the other.
    for (const [counting, checking] of [[b, a], [a, b]] as const) {
      await expect
        .poll(
          async () => {
            const fresh = freshAddress();
            for (let i = 0; i < LIMIT; i++) expect((await wrong(counting, fresh)).status).toBeLessThan(500);
            return (await right(checking, fresh)).status;
          },
          { timeout: 20_000, interval: 250 },
        )
        .toBe(429);
    }
  }, 60_000);
});

// Concurrency: every answer is decided by one atomic operation in Redis, so 200 guesses that
// reach two instances together (each past the check before its body) learn at most
// LOGIN_RATE_LIMIT password outcomes, and correct logins never take each other's place.
describeIf('redis-server')('failed-login limit shared through Redis, two instances, concurrent logins (LOGIN_RATE_LIMIT=5)', () => {
  const CONCURRENT_LIMIT = 5;
  let redis: PrivateRedis;
  let instances: InProcessService[] = [];
  let ports: number[] = [];

  beforeAll(async () => {
    redis = await createPrivateRedis();
    const env = { LOGIN_LIMIT_STORE: redis.url, LOGIN_RATE_LIMIT: String(CONCURRENT_LIMIT), TRUST_PROXY: 'true' };
    instances = [await startService({ kind: 'sqlite', env: env }), await startService({ kind: 'sqlite', env: env })];
    ports = instances.map((instance) => portOf(instance.baseUrl));
  });
  afterAll(async () => {
    for (const instance of instances) await instance.stop();
    await redis?.stop();
  });

  it('200 concurrent wrong passwords over both instances: at most 5 answer 401, the rest 429 with Retry-After; then a correct login is 429 on either', async () => {
    const address = '10.2.0.1';
    const answers = await concurrentLogins(
      Array.from({ length: 200 }, (_, i) => `wrong-${i}`),
      { address, ports },
    );
    expectAtMostLimitRevealed(answers, CONCURRENT_LIMIT);
    const correct = await concurrentLogins([TEST_PASSWORD, TEST_PASSWORD], { address, ports });
    expect(countStatuses(correct)).toEqual({ 429: 2 });
  });

  it('50 concurrent correct logins over both instances, with no failure before: all 200', async () => {
    const answers = await concurrentLogins(Array<string>(50).fill(TEST_PASSWORD), { address: '10.2.0.2', ports });
    expect(countStatuses(answers)).toEqual({ 200: 50 });
  });
});
