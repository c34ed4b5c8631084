// Configuration (README "Configuration"): names, defaults, DB_URL schemes, validation.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { describeStoreUrl, parseStoreUrl } from '../../src/store/store-url.js';
import { FAST_PATH_NAMES } from '../../src/seams.js';

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

  it('SECRET_TOKEN missing or empty with a server store or an in-memory one refuses to start, saying how to make one', () => {
    for (const DB_URL of ['postgres://u@h:5432/db', 'mysql://u@h/db', 'sqlite::memory:']) {
      expect(() => loadConfig({ DB_URL }, cwd)).toThrow(ConfigError);
      expect(() => loadConfig({ DB_URL, SECRET_TOKEN: '' }, cwd)).toThrow(/^SECRET_TOKEN is not set: .* make one with node -e "console\.log\(require\('node:crypto'\)\.randomBytes\(32\)\.toString\('base64url'\)\)"$/);
    }
  });

  it('SECRET_TOKEN missing with the embedded SQLite file: made once (256 bits), kept owner-only beside it, the same on every later start', () => {
    const dir = mkdtempSync(join(tmpdir(), 'books-secret-'));
    try {
      const first = loadConfig({ AUTH_USERNAME: 'u', AUTH_PASSWORD: 'p' }, dir);
      const file = join(dir, 'data', 'books.db.secret');
      expect(first.warnings).toEqual([`SECRET_TOKEN is not set: using the one made now and kept in ${file} (owner-only; set SECRET_TOKEN to use your own)`]);
      expect(first.auth.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, 'utf8')).toBe(`${first.auth.secret}\n`);
      expect(first.warnings.join('')).not.toContain(first.auth.secret);
      const again = loadConfig({ AUTH_USERNAME: 'u', AUTH_PASSWORD: 'p', SECRET_TOKEN: '' }, dir);
      expect(again.auth.secret).toBe(first.auth.secret);
      expect(again.warnings).toEqual([`SECRET_TOKEN is not set: using the one kept in ${file} (owner-only; set SECRET_TOKEN to use your own)`]);
      // A SECRET_TOKEN that is set wins, and nothing is read.
      expect(loadConfig({ SECRET_TOKEN: SECRET, AUTH_USERNAME: 'u', AUTH_PASSWORD: 'p' }, dir).auth.secret).toBe(SECRET);
      // Only the secret file, no leftover draft.
      expect(readdirSync(join(dir, 'data'))).toEqual(['books.db.secret']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SECRET_TOKEN shorter than 32 bytes only warns', () => {
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

  it.each(['books.db', './data/books.db', '/var/lib/books/books.db'])('DB_URL %s (a path): the message says how to write it', (url) => {
    expect(() => parseStoreUrl(url, cwd)).toThrow(`; for a SQLite file, write sqlite:${url}`);
  });

  it('a URL with another scheme gets no SQLite hint', () => {
    expect(() => parseStoreUrl('mongodb://x', cwd)).toThrow(/^DB_URL has an unsupported scheme "mongodb": use [^;]*$/);
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
    ['NODE_HTTP_PARTS', 'answer-in-turns'], // a speed path, not a protocol part
    ['NODE_HTTP_PARTS', ','],
    ['FAST_PATHS', 'maybe'],
    ['FAST_PATHS', 'shared-lists,-token-cache'],
    ['FAST_PATHS', ','],
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

  const every = (on: boolean) => ({
    pipelineInOrder: on,
    answerHalfClosedClients: on,
    lingeringClose: on,
    ignoreUnknownExpect: on,
    finishAnswersOnClientError: on,
  });
  const settings = (env: Record<string, string>) => loadConfig({ SECRET_TOKEN: SECRET, ...env }, cwd);
  const pathsOf = (env: Record<string, string>) => [...settings(env).fastPaths].sort();
  const ALL_PATHS = [...FAST_PATH_NAMES].sort();

  it('NODE_HTTP_PARTS: every protocol part of the Node HTTP layer on by default; off; or the parts to keep on', () => {
    const parts = (value?: string) => settings(value === undefined ? {} : { NODE_HTTP_PARTS: value }).http.nodeHttpParts;
    expect(parts()).toEqual(every(true));
    expect(parts('on')).toEqual(every(true));
    expect(parts('OFF')).toEqual(every(false));
    expect(parts(' lingering-close, answer-half-closed-clients ')).toEqual({ ...every(false), lingeringClose: true, answerHalfClosedClients: true });
    expect(() => parts('turns')).toThrow(/NODE_HTTP_PARTS .*pipeline-in-order, answer-half-closed-clients/);
  });

  it('FAST_PATHS: every speed path on by default; off; the paths to turn on; or -paths to turn off', () => {
    expect(pathsOf({})).toEqual(ALL_PATHS);
    expect(pathsOf({ FAST_PATHS: 'on' })).toEqual(ALL_PATHS);
    expect(pathsOf({ FAST_PATHS: 'OFF' })).toEqual([]);
    expect(pathsOf({ FAST_PATHS: ' token-cache, answer-in-turns ' })).toEqual(['answer-in-turns', 'token-cache']);
    expect(pathsOf({ FAST_PATHS: '-token-cache,-answer-in-turns' })).toEqual(ALL_PATHS.filter((name) => name !== 'token-cache' && name !== 'answer-in-turns'));
    expect(pathsOf({ HEAP_SIZING: 'false' })).toEqual(ALL_PATHS.filter((name) => name !== 'heap-sizing'));
    expect(() => pathsOf({ FAST_PATHS: 'turns' })).toThrow(/FAST_PATHS .*answer-in-turns, shared-lists/);
  });

  it('HTTP_MACHINERY, the older switch, still works for one release, with a warning: off, on, or the parts to keep on', () => {
    const off = settings({ HTTP_MACHINERY: 'off' });
    expect([off.fastPaths.size, off.http.nodeHttpParts]).toEqual([0, every(false)]);
    expect(off.warnings.join('\n')).toMatch(/HTTP_MACHINERY is deprecated.*FAST_PATHS.*NODE_HTTP_PARTS/);
    const on = settings({ HTTP_MACHINERY: 'on' });
    expect([[...on.fastPaths].sort(), on.http.nodeHttpParts]).toEqual([ALL_PATHS, every(true)]);
    const listed = settings({ HTTP_MACHINERY: 'lingering-close' });
    expect([[...listed.fastPaths].sort(), listed.http.nodeHttpParts]).toEqual([ALL_PATHS.filter((name) => name !== 'answer-in-turns'), { ...every(false), lingeringClose: true }]);
    // The new switches win over it.
    expect(pathsOf({ HTTP_MACHINERY: 'off', FAST_PATHS: 'on' })).toEqual(ALL_PATHS);
    expect(settings({}).warnings.join('\n')).not.toMatch(/HTTP_MACHINERY/);
  });
});

describe('OpenTelemetry tracing (the standard OTEL_* variables)', () => {
  const tracing = (env: Record<string, string>) => loadConfig({ SECRET_TOKEN: SECRET, ...env }, cwd).tracing;
  const refused = (env: Record<string, string>) => {
    try {
      tracing(env);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    }
    throw new Error(`accepted ${JSON.stringify(env)}`);
  };

  it('off unless an OTLP endpoint is set or OTEL_TRACES_EXPORTER=otlp; OTEL_TRACES_EXPORTER=none and OTEL_SDK_DISABLED=true win', () => {
    expect(tracing({})).toBeUndefined();
    // Off: the other variables are not even read, so a leftover cannot stop the service.
    expect(tracing({ OTEL_SERVICE_NAME: 'books', OTEL_TRACES_SAMPLER: 'nonsense', OTEL_BSP_MAX_QUEUE_SIZE: 'many' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined(); // empty counts as unset
    expect(tracing({ OTEL_TRACES_EXPORTER: 'otlp' })?.exporter.url).toBe('http://localhost:4318/v1/traces');
  });

  it('on: the specification defaults', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toEqual({
      serviceName: 'book-collection',
      resourceAttributes: {},
      exporter: {
        url: 'http://collector:4318/v1/traces',
        description: 'http://collector:4318/v1/traces',
        protocol: 'http/protobuf',
        headers: {},
        timeoutMs: 10_000,
        compression: 'none',
      },
      sampler: { name: 'parentbased_always_on', ratio: 1 },
      propagators: ['tracecontext', 'baggage'],
      batch: { scheduleDelayMs: 5_000, exportTimeoutMs: 30_000, maxQueueSize: 2048, maxExportBatchSize: 512 },
    });
  });

  it('the endpoints: a base URL gets /v1/traces; the traces endpoint is used as it is; the description shows no credentials', () => {
    expect(tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example/prefix/' })?.exporter.url).toBe('https://otel.example/prefix/v1/traces');
    const own = tracing({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://ignored:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://u:key@otel.example:443/in?token=x' });
    expect(own?.exporter.url).toBe('https://u:key@otel.example/in?token=x');
    expect(own?.exporter.description).toBe('https://otel.example/in');
    expect(refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/);
    expect(refused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://u:key@collector:4317' })).not.toContain('key');
  });

  it('the exporter: protocol, headers, timeout, compression; the traces variable wins over the general one', () => {
    const settings = tracing({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=general,x-tenant=books',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'api-key=se%20cret',
      OTEL_EXPORTER_OTLP_TIMEOUT: '2500',
      OTEL_EXPORTER_OTLP_COMPRESSION: 'gzip',
    });
    expect(settings?.exporter).toMatchObject({ protocol: 'http/json', headers: { 'api-key': 'se cret', 'x-tenant': 'books' }, timeoutMs: 2500, compression: 'gzip' });
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(refused({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toMatch(/^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json/);
    expect(refused({ ...on, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '10s' })).toMatch(/^OTEL_EXPORTER_OTLP_TRACES_TIMEOUT must be an integer/);
    expect(refused({ ...on, OTEL_EXPORTER_OTLP_COMPRESSION: 'zstd' })).toMatch(/^OTEL_EXPORTER_OTLP_COMPRESSION must be gzip or none/);
    // A malformed header is named, its value (a credential, maybe) never shown.
    const message = refused({ ...on, OTEL_EXPORTER_OTLP_HEADERS: 'api-key=ok,bad header=top-secret-value' });
    expect(message).toMatch(/^OTEL_EXPORTER_OTLP_HEADERS must be a comma-separated list of key=value/);
    expect(message).not.toContain('top-secret-value');
  });

  it('service name and resource attributes, sampler, propagators, the batch queue', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };
    expect(tracing({ ...on, OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment=prod%2Deu' })).toMatchObject({
      serviceName: 'from-resource',
      resourceAttributes: { 'deployment.environment': 'prod-eu' },
    });
    expect(tracing({ ...on, OTEL_SERVICE_NAME: 'books', OTEL_RESOURCE_ATTRIBUTES: 'service.name=other' })?.serviceName).toBe('books');
    expect(tracing({ ...on, OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })?.sampler).toEqual({
      name: 'parentbased_traceidratio',
      ratio: 0.25,
    });
    expect(tracing({ ...on, OTEL_TRACES_SAMPLER: 'always_off', OTEL_TRACES_SAMPLER_ARG: 'ignored' })?.sampler).toEqual({ name: 'always_off', ratio: 1 });
    expect(tracing({ ...on, OTEL_PROPAGATORS: 'none' })?.propagators).toEqual([]);
    expect(tracing({ ...on, OTEL_PROPAGATORS: 'tracecontext' })?.propagators).toEqual(['tracecontext']);
    expect(tracing({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '100', OTEL_BSP_SCHEDULE_DELAY: '200', OTEL_BSP_EXPORT_TIMEOUT: '1000' })?.batch).toEqual({
      scheduleDelayMs: 200,
      exportTimeoutMs: 1000,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });

    expect(refused({ ...on, OTEL_TRACES_SAMPLER: 'jaeger_remote' })).toMatch(/^OTEL_TRACES_SAMPLER must be one of always_on, /);
    expect(refused({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' })).toMatch(/^OTEL_TRACES_SAMPLER_ARG must be a probability/);
    expect(refused({ ...on, OTEL_PROPAGATORS: 'tracecontext,b3' })).toMatch(/^OTEL_PROPAGATORS must be/);
    expect(refused({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '0' })).toMatch(/^OTEL_BSP_MAX_QUEUE_SIZE must be an integer from 1/);
    expect(refused({ ...on, OTEL_BSP_MAX_QUEUE_SIZE: '10', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '20' })).toMatch(
      /^OTEL_BSP_MAX_EXPORT_BATCH_SIZE \(20\) must not be larger than OTEL_BSP_MAX_QUEUE_SIZE \(10\)/,
    );
    expect(refused({ ...on, OTEL_RESOURCE_ATTRIBUTES: 'no-equals-sign' })).toMatch(/^OTEL_RESOURCE_ATTRIBUTES must be/);
    expect(refused({ OTEL_TRACES_EXPORTER: 'console' })).toMatch(/^OTEL_TRACES_EXPORTER must be otlp or none/);
    expect(refused({ OTEL_SDK_DISABLED: 'yes' })).toMatch(/^OTEL_SDK_DISABLED must be true or false/);
  });
});
