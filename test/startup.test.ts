// Spec "General rules" 5-6 and DESIGN.md "Configuration": the built service starts from any
// working directory, reads .env there, and refuses to start with one clear line when the
// configuration or the store fails.
import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, spawnService, waitUntilAnswering } from './helpers/process.js';
import { TEST_SECRET } from './helpers/service.js';

const workDir = mkdtempSync(join(tmpdir(), 'books-startup-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

async function expectStartupFailure(env: Record<string, string | undefined>, cause: RegExp) {
  const started = Date.now();
  const service = spawnService(env, workDir);
  const code = await service.exited;
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(code).not.toBe(0);
  const lines = service.stderr().trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(cause);
  expect(service.stderr()).not.toMatch(/\n\s+at /); // no stack trace for an expected failure
  return service;
}

describe('startup failures (spec General rule 6)', () => {
  it('missing SECRET_TOKEN: exits non-zero naming SECRET_TOKEN', async () => {
    await expectStartupFailure({ DB_URL: 'sqlite::memory:' }, /SECRET_TOKEN/);
  });

  it('empty SECRET_TOKEN: exits non-zero naming SECRET_TOKEN', async () => {
    await expectStartupFailure({ SECRET_TOKEN: '', DB_URL: 'sqlite::memory:' }, /SECRET_TOKEN/);
  });

  it('unknown DB_URL scheme: exits non-zero naming DB_URL and the scheme', async () => {
    await expectStartupFailure({ SECRET_TOKEN: TEST_SECRET, DB_URL: 'redis://127.0.0.1:6379' }, /DB_URL.*redis/);
  });

  it('invalid PORT: exits non-zero naming PORT', async () => {
    await expectStartupFailure({ SECRET_TOKEN: TEST_SECRET, DB_URL: 'sqlite::memory:', PORT: 'eighty' }, /PORT/);
  });

  it('unreachable PostgreSQL: retries for DB_CONNECT_TIMEOUT (default 10 s), then exits within 15 s naming the store', async () => {
    const service = await expectStartupFailure(
      { SECRET_TOKEN: TEST_SECRET, DB_URL: 'postgres://books:hunter2-secret@127.0.0.1:1/books' },
      /cannot reach the store at postgres:\/\/books:\*\*\*@127\.0\.0\.1:1\/books within 10 s/,
    );
    // The password in DB_URL is never printed.
    expect(service.stderr() + service.stdout()).not.toContain('hunter2-secret');
  });

  it('unreachable MySQL: exits non-zero naming the store', async () => {
    await expectStartupFailure(
      { SECRET_TOKEN: TEST_SECRET, DB_URL: 'mysql://root@127.0.0.1:1/books', DB_CONNECT_TIMEOUT: '1' },
      /cannot reach the store at mysql:\/\/root@127\.0\.0\.1:1\/books within 1 s/,
    );
  });

  it('port already in use: exits non-zero naming PORT', async () => {
    const port = await freePort();
    const first = spawnService({ SECRET_TOKEN: TEST_SECRET, DB_URL: 'sqlite::memory:', PORT: String(port), HOST: '127.0.0.1' }, workDir);
    try {
      await waitUntilAnswering(`http://127.0.0.1:${port}`, first);
      await expectStartupFailure(
        { SECRET_TOKEN: TEST_SECRET, DB_URL: 'sqlite::memory:', PORT: String(port), HOST: '127.0.0.1' },
        /PORT.*EADDRINUSE/,
      );
    } finally {
      first.child.kill('SIGTERM');
      await first.exited;
    }
  });
});

describe('startup from another working directory (DESIGN: .env and ./data/books.db are relative to it)', () => {
  it('reads .env from the working directory, creates ./data/books.db, keeps books across a restart, exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-cwd-'));
    try {
      const port = await freePort();
      writeFileSync(join(dir, '.env'), `SECRET_TOKEN=${TEST_SECRET}\nPORT=${port}\nHOST=127.0.0.1\n`);
      const baseUrl = `http://127.0.0.1:${port}`;

      const first = spawnService({}, dir);
      await waitUntilAnswering(baseUrl, first);
      expect(existsSync(join(dir, 'data', 'books.db'))).toBe(true);
      const login = await fetch(`${baseUrl}/token`, {
        method: 'POST',
        body: JSON.stringify({ username: 'admin', password: 'password' }),
      });
      const { token } = ((await login.json()) as { data: { token: string } }).data;
      const created = await fetch(`${baseUrl}/book`, {
        method: 'POST',
        headers: { authorization: token, 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'Kept', author: 'Disk', year: 2001 }),
      });
      const { id } = ((await created.json()) as { data: { id: number } }).data;
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      // The default credentials are in use: the service says so.
      expect(first.stdout()).toMatch(/default credentials/);
      // Secrets never reach the log.
      expect(first.stdout() + first.stderr()).not.toContain(TEST_SECRET);
      expect(first.stdout() + first.stderr()).not.toContain(token);

      const second = spawnService({}, dir);
      await waitUntilAnswering(baseUrl, second);
      const read = await fetch(`${baseUrl}/book/${id}`, { headers: { authorization: token } });
      expect(await read.json()).toEqual({
        status: 200,
        message: 'Book retrieved successfully',
        data: { id, title: 'Kept', author: 'Disk', year: 2001 },
      });
      second.child.kill('SIGINT');
      expect(await second.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a short SECRET_TOKEN starts, with a warning', async () => {
    const port = await freePort();
    const service = spawnService({ SECRET_TOKEN: 'short', DB_URL: 'sqlite::memory:', PORT: String(port), HOST: '127.0.0.1' }, workDir);
    await waitUntilAnswering(`http://127.0.0.1:${port}`, service);
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stdout()).toMatch(/SECRET_TOKEN is shorter than 32 bytes/);
    expect(service.stdout()).not.toMatch(/"short"/);
  });
});
