// Configuration (README "Configuration"): names, defaults, DB_URL schemes, validation.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { describeStoreUrl, parseStoreUrl } from '../../src/store/store-url.js';

const cwd = mkdtempSync(join(tmpdir(), 'books-config-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));
const SECRET = 'x'.repeat(32);

describe('configuration', () => {
  it('defaults: port 8080, host 0.0.0.0, SQLite ./data/books.db under the working directory', () => {
    const config = loadConfig({ SECRET_TOKEN: SECRET }, cwd);
    expect(config.http.port).toBe(8080);
    expect(config.http.host).toBe('0.0.0.0');
    expect(config.store.target).toEqual({ kind: 'sqlite', file: join(cwd, 'data', 'books.db') });
    expect(config.auth.username).toBe('admin');
    expect(config.auth.password).toBe('password');
    expect(config.auth.loginRateLimit).toBe(10);
    expect(config.store.connectTimeoutMs).toBe(10_000);
    expect(config.http.metrics).toBe(true);
    expect(config.workers).toBe(1);
    expect(config.logLevel).toBe('info');
    expect(config.warnings.join('\n')).toMatch(/default credentials/);
  });

  it('SECRET_TOKEN missing or empty refuses to start; shorter than 32 bytes only warns', () => {
    expect(() => loadConfig({}, cwd)).toThrow(ConfigError);
    expect(() => loadConfig({ SECRET_TOKEN: '' }, cwd)).toThrow(/SECRET_TOKEN/);
    const config = loadConfig({ SECRET_TOKEN: 'short', AUTH_USERNAME: 'u', AUTH_PASSWORD: 'p' }, cwd);
    expect(config.warnings).toEqual([expect.stringMatching(/SECRET_TOKEN is shorter than 32 bytes/)]);
  });

  it.each([
    ['sqlite:./data/books.db', { kind: 'sqlite', file: join(cwd, 'data/books.db') }],
    ['sqlite:/var/lib/books.db', { kind: 'sqlite', file: '/var/lib/books.db' }],
    ['sqlite:///var/lib/books.db', { kind: 'sqlite', file: '/var/lib/books.db' }],
    ['sqlite::memory:', { kind: 'sqlite', file: ':memory:' }],
    ['file:books.db', { kind: 'sqlite', file: join(cwd, 'books.db') }],
    [
      'postgres://u:p@h:5432/db',
      { kind: 'postgres', sessionAttrs: 'any', nodes: [{ name: 'h:5432', url: 'postgres://u:p@h:5432/db' }] },
    ],
    ['postgresql://h/db', { kind: 'postgres', sessionAttrs: 'any', nodes: [{ name: 'h:5432', url: 'postgresql://h/db' }] }],
    [
      'postgres:///db?host=/run/postgresql',
      { kind: 'postgres', sessionAttrs: 'any', nodes: [{ name: 'localhost:5432', url: 'postgres:///db?host=/run/postgresql' }] },
    ],
    ['mysql://root@h/db', { kind: 'mysql', nodes: [{ name: 'h:3306', url: 'mysql://root@h/db' }] }],
    ['mariadb://root@h/db', { kind: 'mysql', nodes: [{ name: 'h:3306', url: 'mysql://root@h/db' }] }],
    // Several hosts: one URL per host, the rest shared.
    [
      'mysql://u:p%40w@h1:3311,h2:3312,[::1]/books?ssl=0',
      {
        kind: 'mysql',
        nodes: [
          { name: 'h1:3311', url: 'mysql://u:p%40w@h1:3311/books?ssl=0' },
          { name: 'h2:3312', url: 'mysql://u:p%40w@h2:3312/books?ssl=0' },
          { name: '[::1]:3306', url: 'mysql://u:p%40w@[::1]/books?ssl=0' },
        ],
      },
    ],
    // target_session_attrs is the service's to apply (pg does not know it): taken out of the URL.
    [
      'postgres://u@h1:5432,h2:5433/books?target_session_attrs=read-write',
      {
        kind: 'postgres',
        sessionAttrs: 'read-write',
        nodes: [
          { name: 'h1:5432', url: 'postgres://u@h1:5432/books' },
          { name: 'h2:5433', url: 'postgres://u@h2:5433/books' },
        ],
      },
    ],
    [
      'postgres://h1,h2/books?sslmode=disable&target_session_attrs=primary&application_name=x',
      {
        kind: 'postgres',
        sessionAttrs: 'primary',
        nodes: [
          { name: 'h1:5432', url: 'postgres://h1/books?sslmode=disable&application_name=x' },
          { name: 'h2:5432', url: 'postgres://h2/books?sslmode=disable&application_name=x' },
        ],
      },
    ],
  ])('DB_URL %s', (url, expected) => {
    expect(parseStoreUrl(url, cwd)).toEqual(expected);
  });

  it.each([
    ['mysql://u@h1:3311,,h3/db', /empty host/],
    ['mysql://u@h1:3311,h2:99999/db', /h2:99999.*invalid port/],
    ['postgres://u@h1:5432,h2:x/db', /h2:x.*invalid port/],
    ['postgres://u@h1,h2/db?target_session_attrs=standby', /target_session_attrs "standby" is not supported/],
  ])('DB_URL %s refuses to start with a clear reason', (url, reason) => {
    expect(() => parseStoreUrl(url, cwd)).toThrow(reason);
  });

  it.each(['redis://localhost', 'mongodb://x', 'books.db', 'http://x'])('DB_URL %s: unsupported scheme refuses to start', (url) => {
    expect(() => parseStoreUrl(url, cwd)).toThrow(/DB_URL/);
  });

  it('passwords in DB_URL are masked in descriptions', () => {
    expect(describeStoreUrl('postgres://books:s3cret@db:5432/books')).toBe('postgres://books:***@db:5432/books');
    expect(describeStoreUrl('sqlite:./data/books.db')).toBe('sqlite:./data/books.db');
  });

  it('.env in the working directory is read; the environment wins over it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-dotenv-'));
    writeFileSync(join(dir, '.env'), `SECRET_TOKEN=${SECRET}\nPORT=9000\nHOST=127.0.0.1\n`);
    const config = loadConfig({ PORT: '9100' }, dir);
    expect(config.auth.secret).toBe(SECRET);
    expect(config.http.port).toBe(9100);
    expect(config.http.host).toBe('127.0.0.1');
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['PORT', '70000'],
    ['PORT', 'abc'],
    ['LOGIN_RATE_LIMIT', '-1'],
    ['DB_CONNECT_TIMEOUT', '0'],
    ['DB_POOL_MAX', '0'],
    ['LOG_LEVEL', 'loud'],
    ['METRICS', 'maybe'],
    ['WORKERS', '0'],
    ['HTTP_MACHINERY', 'maybe'],
    ['HTTP_MACHINERY', 'answer-in-turns,fast-path'],
    ['HTTP_MACHINERY', ','],
  ])('%s=%s is refused with a message naming it', (name, value) => {
    expect(() => loadConfig({ SECRET_TOKEN: SECRET, [name]: value }, cwd)).toThrow(new RegExp(name));
  });

  it('TRUST_PROXY: off by default; true, a hop count or addresses', () => {
    const trust = (value?: string) => loadConfig({ SECRET_TOKEN: SECRET, ...(value === undefined ? {} : { TRUST_PROXY: value }) }, cwd).http.trustProxy;
    expect(trust()).toBe(false);
    expect(trust('true')).toBe(true);
    expect(trust('2')).toBe(2);
    expect(trust('10.0.0.0/8, 127.0.0.1, loopback')).toEqual(['10.0.0.0/8', '127.0.0.1', 'loopback']);
    expect(() => trust('everyone')).toThrow(/TRUST_PROXY/);
  });

  it('CORS_ORIGINS: off by default, "*" or a comma-separated list', () => {
    expect(loadConfig({ SECRET_TOKEN: SECRET }, cwd).http.corsOrigins).toBeUndefined();
    expect(loadConfig({ SECRET_TOKEN: SECRET, CORS_ORIGINS: '*' }, cwd).http.corsOrigins).toBe('*');
    expect(loadConfig({ SECRET_TOKEN: SECRET, CORS_ORIGINS: 'https://a.example, https://b.example' }, cwd).http.corsOrigins).toEqual([
      'https://a.example',
      'https://b.example',
    ]);
  });

  it('HTTP_MACHINERY: every part of the Node HTTP layer on by default; off; or the parts to keep on', () => {
    const machinery = (value?: string) => loadConfig({ SECRET_TOKEN: SECRET, ...(value === undefined ? {} : { HTTP_MACHINERY: value }) }, cwd).http.machinery;
    const every = (on: boolean) => ({
      answerInTurns: on,
      pipelineInOrder: on,
      answerHalfClosedClients: on,
      lingeringClose: on,
      ignoreUnknownExpect: on,
      finishAnswersOnClientError: on,
    });
    expect(machinery()).toEqual(every(true));
    expect(machinery('on')).toEqual(every(true));
    expect(machinery('OFF')).toEqual(every(false));
    expect(machinery(' lingering-close, answer-half-closed-clients ')).toEqual({ ...every(false), lingeringClose: true, answerHalfClosedClients: true });
    expect(() => machinery('turns')).toThrow(/HTTP_MACHINERY .*answer-in-turns, pipeline-in-order/);
  });
});
