// The failed-login limit (docs/operations.md "Security": after 10 failed POST /token attempts within a
// minute from one address, every login attempt gets 429 with Retry-After) holds with WORKERS=2:
// the workers share one count, so spreading attempts over them gains an attacker nothing.
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { jsonLogLines } from '../helpers/service/main-process.js';
import { concurrentLogins, countStatuses, expectAtMostLimitRevealed } from '../helpers/client/concurrent-logins.js';
import { portOf } from '../helpers/client/raw-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  message: string;
}

/**
 * POST /token on a connection of its own: node:cluster hands each new connection to the next
 * worker in turn, so consecutive attempts reach different workers.
 */
function loginOnNewConnection(baseUrl: string, username: string, password: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${baseUrl}/token`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json', connection: 'close' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            message: (JSON.parse(text) as { message: string }).message,
          }),
        );
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ username, password }));
  });
}

describe('failed-login limit with WORKERS=2', () => {
  let dir: string;
  let service: ChildService;

  const logLines = () => jsonLogLines(service.process);

  async function waitForLogLines(count: number, matches: (line: ReturnType<typeof logLines>[number]) => boolean) {
    for (let waited = 0; waited < 15_000; waited += 50) {
      const found = logLines().filter(matches);
      if (found.length >= count) return found;
      await sleep(50);
    }
    throw new Error(`fewer than ${count} matching log lines:\n${service.process.stdout()}`);
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'login-limit-workers-'));
    service = await startService({
      childProcess: true,
      dbUrl: `sqlite:${join(dir, 'books.db')}`,
      env: { WORKERS: '2', LOGIN_RATE_LIMIT: '10', LOG_LEVEL: 'info' },
    });
    // Both workers listening, so that new connections alternate between them.
    await waitForLogLines(2, (line) => line.msg === 'book service ready');
  }, 60_000);

  afterAll(async () => {
    const code = await service?.stop('SIGTERM');
    await killAllChildServices();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  }, 30_000);

  it('10 failures spread over both workers: the 11th attempt, even a correct one, gets 429 from either worker', async () => {
    const failures: Answer[] = [];
    for (let i = 0; i < 10; i++) failures.push(await loginOnNewConnection(service.baseUrl, TEST_USERNAME, `wrong-${i}`));
    expect(failures.map((answer) => answer.status)).toEqual(Array(10).fill(401));
    // The failures were really spread: both workers answered some of them.
    const answeredBy = await waitForLogLines(10, (line) => line.route === '/token' && line.status === 401);
    expect(new Set(answeredBy.map((line) => line.pid)).size).toBe(2);

    // Two more attempts on new connections: one lands on each worker.
    for (const _ of [1, 2]) {
      const refused = await loginOnNewConnection(service.baseUrl, TEST_USERNAME, TEST_PASSWORD);
      expect(refused).toMatchObject({ status: 429, message: 'Too many requests' });
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(refused.retryAfter)).toBeLessThanOrEqual(60);
    }
  }, 30_000);

  it('a worker started after the limit was reached (one died and was replaced) refuses that address too', async () => {
    const workerPids = [...new Set(logLines().filter((line) => line.msg === 'book service ready').map((line) => line.pid))];
    process.kill(workerPids[0]!, 'SIGKILL');
    await waitForLogLines(3, (line) => line.msg === 'book service ready');
    for (const _ of [1, 2]) {
      const refused = await loginOnNewConnection(service.baseUrl, TEST_USERNAME, TEST_PASSWORD);
      expect(refused).toMatchObject({ status: 429, message: 'Too many requests' });
    }
  }, 30_000);
});

// Concurrency: the primary decides every login (it counts each failure and answers each
// correct login), so 200 guesses that reach both workers together, each past the worker's
// check before its body, learn at most LOGIN_RATE_LIMIT password outcomes.
describe('failed-login limit with WORKERS=2, concurrent logins (LOGIN_RATE_LIMIT=5)', () => {
  const LIMIT = 5;
  let dir: string;
  let service: ChildService;
  const requestLogLines = () =>
    service.process
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { pid: number; msg: string; route?: string; status?: number })
      .filter((line) => line.route === '/token');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'login-limit-workers-concurrent-'));
    service = await startService({
      childProcess: true,
      dbUrl: `sqlite:${join(dir, 'books.db')}`,
      env: { WORKERS: '2', LOGIN_RATE_LIMIT: String(LIMIT), TRUST_PROXY: 'true', LOG_LEVEL: 'info' },
    });
    // Both workers listening, so that new connections alternate between them.
    for (let waited = 0; service.process.stdout().split('book service ready').length - 1 < 2; waited += 50) {
      if (waited > 15_000) throw new Error(`the workers did not both start:\n${service.process.stdout()}`);
      await sleep(50);
    }
  }, 60_000);

  afterAll(async () => {
    const code = await service?.stop('SIGTERM');
    await killAllChildServices();
    rmSync(dir, { recursive: true, force: true });
    expect(code).toBe(0);
  }, 30_000);

  it('200 concurrent wrong passwords over both workers: at most 5 answer 401, the rest 429 with Retry-After; then a correct login is 429 on either', async () => {
    const address = '10.3.0.1';
    const ports = [portOf(service.baseUrl)];
    const answers = await concurrentLogins(
      Array.from({ length: 200 }, (_, i) => `wrong-${i}`),
      { address, ports },
    );
    expectAtMostLimitRevealed(answers, LIMIT);
    // The attempts were really spread: both workers answered some of them.
    await expect.poll(() => requestLogLines().length).toBeGreaterThanOrEqual(200);
    expect(new Set(requestLogLines().map((line) => line.pid)).size).toBe(2);

    const correct = await concurrentLogins([TEST_PASSWORD, TEST_PASSWORD], { address, ports });
    expect(countStatuses(correct)).toEqual({ 429: 2 });
  }, 30_000);

  it('50 concurrent correct logins over both workers, with no failure before: all 200', async () => {
    const answers = await concurrentLogins(Array<string>(50).fill(TEST_PASSWORD), { address: '10.3.0.2', ports: [portOf(service.baseUrl)] });
    expect(countStatuses(answers)).toEqual({ 200: 50 });
  }, 30_000);
});
