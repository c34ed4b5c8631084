// Startup (README "Configuration", docs/operations.md "Startup and its failures"): the built service starts
// from any working directory, reads .env there, and refuses to start with one clear line
// (naming the setting and the cause, exit code 1, no stack trace) whatever the user got wrong.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './helpers/infra/free-port.js';
import { killAllChildServices, startService } from './helpers/service/start-service.js';
import { TEST_SECRET } from './helpers/client/test-account.js';
import { MYSQL_ADMIN_URL, POSTGRES_ADMIN_URL } from './helpers/stores/test-store.js';

const workDir = mkdtempSync(join(tmpdir(), 'books-startup-'));
afterAll(async () => {
  await killAllChildServices(); // one that never answered
  rmSync(workDir, { recursive: true, force: true });
});

async function expectStartupFailure(env: Record<string, string | undefined>, cause: RegExp) {
  const started = Date.now();
  const { process: service } = await startService({ childProcess: true, testSettings: false, env, cwd: workDir, waitUntilUp: false });
  const code = await service.exited;
  expect(Date.now() - started).toBeLessThan(15_000);
  expect(code, service.stderr()).toBe(1);
  const lines = service.stderr().trim().split('\n');
  expect(lines, service.stderr()).toHaveLength(1);
  expect(lines[0]).toMatch(/^book-service: cannot start: /);
  expect(lines[0]).toMatch(cause);
  expect(service.stderr()).not.toMatch(/\n\s+at /); // no stack trace for an expected failure
  return service;
}

/** A server URL with another database name or password, for the store mistakes below. */
function withUrl(url: string, change: (parsed: URL) => void): string {
  const parsed = new URL(url);
  change(parsed);
  return parsed.toString();
}

const valid = { SECRET_TOKEN: TEST_SECRET, DB_URL: 'sqlite::memory:', HOST: '127.0.0.1', PORT: '0' };

describe('startup failures: one line naming the setting and the cause, exit code 1', () => {
  it.each<[string, Record<string, string | undefined>, RegExp]>([
    ['missing SECRET_TOKEN', { ...valid, SECRET_TOKEN: undefined }, /SECRET_TOKEN is not set/],
    ['empty SECRET_TOKEN', { ...valid, SECRET_TOKEN: '' }, /SECRET_TOKEN is not set/],
    ['unknown DB_URL scheme', { ...valid, DB_URL: 'redis://127.0.0.1:6379' }, /DB_URL.*"redis"/],
    ['PORT not a number', { ...valid, PORT: 'eighty' }, /PORT must be an integer.*"eighty"/],
    ['PORT out of range', { ...valid, PORT: '70000' }, /PORT must be an integer from 0 to 65535/],
    ['HOST that does not resolve (a typo)', { ...valid, HOST: 'locahost' }, /HOST "locahost" does not resolve/],
    // 192.0.2.0/24 is reserved for documentation (RFC 5737): never an address of this machine.
    ['HOST that is not an address of this machine', { ...valid, HOST: '192.0.2.1' }, /HOST "192\.0\.2\.1" is not an address of this machine/],
    ['LOG_LEVEL unknown', { ...valid, LOG_LEVEL: 'loud' }, /LOG_LEVEL must be one of .*"loud"/],
    ['WORKERS zero', { ...valid, WORKERS: '0' }, /WORKERS must be an integer from 1/],
    ['TRUST_PROXY unreadable', { ...valid, TRUST_PROXY: 'maybe' }, /TRUST_PROXY must be/],
    ['DB_CONNECT_TIMEOUT not a number', { ...valid, DB_CONNECT_TIMEOUT: 'soon' }, /DB_CONNECT_TIMEOUT must be a number of seconds/],
    ['METRICS not a boolean', { ...valid, METRICS: 'perhaps' }, /METRICS must be true or false/],
    ['LOGIN_LIMIT_STORE neither memory nor a Redis URL (password masked)', { ...valid, LOGIN_LIMIT_STORE: 'memcached://:wrong-password-here@cache:11211' }, /LOGIN_LIMIT_STORE must be memory or a redis:\/\/host:port\[\/db\] URL; got "memcached:\/\/:\*\*\*@cache:11211"/],
    ['SQLite file under a regular file', { ...valid, DB_URL: 'sqlite:/etc/hostname/books.db' }, /cannot open the SQLite store at sqlite:\/etc\/hostname\/books\.db \(DB_URL\)/],
    [
      'PostgreSQL database that does not exist',
      { ...valid, DB_URL: withUrl(POSTGRES_ADMIN_URL, (url) => (url.pathname = '/no_such_database_here')) },
      // The server was reached: the line says so, and the command that makes the database.
      /cannot use the store at postgres:\/\/\S+\/no_such_database_here \(DB_URL\): the database "no_such_database_here" does not exist on \S+:\d+: create it with `createdb -h \S+ -p \d+ (-U \S+ )?no_such_database_here`, or name another in DB_URL$/m,
    ],
    [
      'MySQL database that does not exist',
      { ...valid, DB_URL: withUrl(MYSQL_ADMIN_URL, (url) => (url.pathname = '/no_such_database_here')) },
      /cannot use the store at mysql:\/\/\S+\/no_such_database_here \(DB_URL\): the database "no_such_database_here" does not exist on \S+:\d+: create it with `mariadb -h \S+ -P \d+ (-u \S+ )?-p -e 'CREATE DATABASE `no_such_database_here`'`, or name another in DB_URL$/m,
    ],
    [
      'MySQL with a wrong password (masked in the message)',
      { ...valid, DB_URL: withUrl(MYSQL_ADMIN_URL, (url) => (url.password = 'wrong-password-here')) },
      /cannot reach the store at mysql:\/\/root:\*\*\*@.*\(DB_URL\): Access denied/,
    ],
  ])('%s', async (_name, env, cause) => {
    const service = await expectStartupFailure(env, cause);
    expect(service.stderr() + service.stdout()).not.toContain('wrong-password-here');
  });

  it('unreachable PostgreSQL: retries for DB_CONNECT_TIMEOUT (default 10 s), then exits within 15 s naming the store', async () => {
    const service = await expectStartupFailure(
      { ...valid, DB_URL: 'postgres://books:hunter2-secret@127.0.0.1:1/books' },
      /cannot reach the store at postgres:\/\/books:\*\*\*@127\.0\.0\.1:1\/books \(DB_URL\) within 10 s \(DB_CONNECT_TIMEOUT\)/,
    );
    // The password in DB_URL is never printed.
    expect(service.stderr() + service.stdout()).not.toContain('hunter2-secret');
  });

  it('unreachable MySQL: exits naming the store', async () => {
    await expectStartupFailure(
      { ...valid, DB_URL: 'mysql://root@127.0.0.1:1/books', DB_CONNECT_TIMEOUT: '1' },
      /cannot reach the store at mysql:\/\/root@127\.0\.0\.1:1\/books \(DB_URL\) within 1 s/,
    );
  });

  // Node's mkdirSync(…, { recursive: true }) never returns under /proc (it retries ENOENT forever).
  it.each(['sqlite:/proc/x/y.db', 'sqlite:/proc/x/deeper/y.db', 'sqlite:/sys/x/y.db'])('an impossible SQLite path (%s): exits within 5 s naming DB_URL, no hang', async (dbUrl) => {
    const started = Date.now();
    const { process: service } = await startService({ childProcess: true, testSettings: false, env: { ...valid, DB_URL: dbUrl }, cwd: workDir, waitUntilUp: false });
    const hung = setTimeout(() => service.child.kill('SIGKILL'), 5_000);
    try {
      const code = await service.exited;
      expect(Date.now() - started, 'still running after 5 s').toBeLessThan(5_000);
      expect(code, service.stderr()).toBe(1);
      const lines = service.stderr().trim().split('\n');
      expect(lines, service.stderr()).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^book-service: cannot start: cannot open the SQLite store at ${dbUrl.replaceAll('/', '\\/')} \\(DB_URL\\): .*mkdir`));
    } finally {
      clearTimeout(hung);
    }
  });

  it('port already in use: exits naming PORT', async () => {
    const port = await freePort();
    const first = await startService({ childProcess: true, testSettings: false, env: { ...valid, PORT: String(port) }, port, cwd: workDir });
    try {
      await expectStartupFailure({ ...valid, PORT: String(port) }, new RegExp(`PORT ${port} is already in use.*EADDRINUSE`));
    } finally {
      await first.stop('SIGTERM');
    }
  });
});

describe('no SECRET_TOKEN anywhere (a fresh clone: npm ci, then npm start)', () => {
  it('the embedded store: a secret is made once beside it, owner-only, named in one warning, never printed; a restart keeps tokens valid', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-nosecret-'));
    try {
      const port = await freePort();
      // What .env.example holds: SECRET_TOKEN empty.
      writeFileSync(join(dir, '.env'), `SECRET_TOKEN=\nPORT=${port}\nHOST=127.0.0.1\n`);
      const baseUrl = `http://127.0.0.1:${port}`;
      const { process: first } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
      const file = join(dir, 'data', 'books.db.secret');
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const secret = readFileSync(file, 'utf8').trim();
      expect(Buffer.from(secret, 'base64url')).toHaveLength(32);
      const login = await fetch(`${baseUrl}/token`, { method: 'POST', body: JSON.stringify({ username: 'admin', password: 'password' }) });
      const { token } = ((await login.json()) as { data: { token: string } }).data;
      first.child.kill('SIGTERM');
      expect(await first.exited).toBe(0);
      const logged = first.stdout() + first.stderr();
      expect(logged.match(/SECRET_TOKEN is not set: using the one made now and kept in \S+books\.db\.secret/g)).toHaveLength(1);
      expect(logged).not.toContain(secret);
      expect(logged).not.toContain(token);

      const { process: second } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
      const read = await fetch(`${baseUrl}/books`, { headers: { authorization: token } });
      expect(read.status).toBe(200);
      expect(readFileSync(file, 'utf8').trim()).toBe(secret);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('WORKERS=3: the secret is made once, and a token signed by one worker is valid on every other, before and after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-nosecret-workers-'));
    try {
      const port = await freePort();
      writeFileSync(join(dir, '.env'), `PORT=${port}\nHOST=127.0.0.1\nWORKERS=3\nLOGIN_RATE_LIMIT=0\n`);
      const baseUrl = `http://127.0.0.1:${port}`;
      // Each request on a connection of its own, so node:cluster spreads them over the workers.
      const fresh = { connection: 'close' };
      const login = async () => {
        const answer = await fetch(`${baseUrl}/token`, { method: 'POST', headers: fresh, body: JSON.stringify({ username: 'admin', password: 'password' }) });
        return ((await answer.json()) as { data: { token: string } }).data.token;
      };
      const everyReadAccepted = async (tokens: string[]) => {
        const statuses = await Promise.all(
          Array.from({ length: 24 }, (_, i) => fetch(`${baseUrl}/books`, { headers: { ...fresh, authorization: tokens[i % tokens.length]! } }).then((answer) => answer.status)),
        );
        expect(statuses.every((status) => status === 200), String(statuses)).toBe(true);
      };
      const { process: first } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
      const tokens = await Promise.all(Array.from({ length: 6 }, login));
      await everyReadAccepted(tokens);
      first.child.kill('SIGTERM');
      expect(await first.exited, first.stdout() + first.stderr()).toBe(0);
      const logged = first.stdout() + first.stderr();
      expect(logged.match(/SECRET_TOKEN is not set: using the one made now and kept in/g)).toHaveLength(1);
      expect(logged).not.toMatch(/SECRET_TOKEN is not set: using the one kept in/);
      const secret = readFileSync(join(dir, 'data', 'books.db.secret'), 'utf8').trim();

      const { process: second } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
      await everyReadAccepted(tokens);
      expect(readFileSync(join(dir, 'data', 'books.db.secret'), 'utf8').trim()).toBe(secret);
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a server store: the start stops, saying how to make one (instances must share it)', async () => {
    await expectStartupFailure(
      { ...valid, SECRET_TOKEN: undefined, DB_URL: POSTGRES_ADMIN_URL },
      /SECRET_TOKEN is not set: it is required to sign and verify tokens, the same on every instance; make one with node -e/,
    );
  });
});

describe('startup from another working directory (.env and ./data/books.db are relative to it)', () => {
  it('reads .env from the working directory, creates ./data/books.db, keeps books across a restart, exits 0 on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-cwd-'));
    try {
      const port = await freePort();
      writeFileSync(join(dir, '.env'), `SECRET_TOKEN=${TEST_SECRET}\nPORT=${port}\nHOST=127.0.0.1\n`);
      const baseUrl = `http://127.0.0.1:${port}`;

      const { process: first } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
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

      const { process: second } = await startService({ childProcess: true, testSettings: false, port, cwd: dir });
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
    const { process: service } = await startService({
      childProcess: true,
      testSettings: false,
      env: { SECRET_TOKEN: 'short', DB_URL: 'sqlite::memory:', PORT: String(port), HOST: '127.0.0.1' },
      port,
      cwd: workDir,
    });
    service.child.kill('SIGTERM');
    expect(await service.exited).toBe(0);
    expect(service.stdout()).toMatch(/SECRET_TOKEN is shorter than 32 bytes/);
    expect(service.stdout()).not.toMatch(/"short"/);
  });
});
