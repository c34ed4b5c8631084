// Configuration: the environment plus an optional `.env` file in the working directory,
// validated once at startup into a frozen Config, or one ConfigError naming the cause.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { secretBesideStore, type KeptSecret } from './auth/secret-file.js';
import { NODE_HTTP_PARTS, settingName, type NodeHttpParts } from './http/node/index.js';
import { FAST_PATH_NAMES, type FastPathName } from './seams.js';
import type { StoreSettings } from './store/open-store.js';
import { describeStoreUrl, parseStoreUrl } from './store/store-url.js';
import { StartupError } from './startup-error.js';
import type { ChangeFeedSettings } from './changes/change-feed.js';
import { parseTracingSettings, type TracingSettings } from './tracing/tracing-config.js';

/** How the service listens and treats HTTP clients. */
export interface HttpSettings {
  port: number;
  host: string;
  /** Whole-request deadline (headers and body), so a slow client cannot hold a socket. */
  requestTimeoutMs: number;
  /** Which proxies' X-Forwarded-For to believe for the client address (Fastify `trustProxy`). */
  trustProxy: boolean | number | string[];
  corsOrigins: string[] | '*' | undefined;
  /** Serve GET /metrics. */
  metrics: boolean;
  /** Serve the web page at GET / (and its files under /ui/). */
  webUi: boolean;
  /** Which protocol fixes of the Node HTTP layer (src/http/node) are on (NODE_HTTP_PARTS). */
  nodeHttpParts: NodeHttpParts;
}

/** Tokens, the built-in account and the failed-login limit. */
export interface AuthSettings {
  secret: string;
  /** SECRET_TOKEN_PREVIOUS: tokens it signed are accepted too, none is signed with it (a rotation). */
  verifyOnlySecrets: string[];
  username: string;
  password: string;
  /** Failed logins a minute per client address before 429; 0 = off. */
  loginRateLimit: number;
  /** Where failed logins are counted: this process (or its workers), or Redis for every instance. */
  loginLimitStore: LoginLimitStore;
}

export type LoginLimitStore = { kind: 'memory' } | { kind: 'redis'; url: string; description: string };

export interface Config {
  http: HttpSettings;
  auth: AuthSettings;
  store: StoreSettings;
  /** GET /books/changes: how long changes are kept, how many streams a process serves. */
  changes: ChangeFeedSettings;
  logLevel: string;
  workers: number;
  /** The speed paths that are on (FAST_PATHS, src/seams.ts; the layers are in src/fast/). */
  fastPaths: ReadonlySet<FastPathName>;
  /** OpenTelemetry tracing from the standard OTEL_* variables (src/tracing/tracing-config.ts); undefined: off. */
  tracing: TracingSettings | undefined;
  /** Startup warnings (weak secret, default credentials), logged once the logger exists. */
  warnings: string[];
}

/** A setting that cannot be used: the message names it. */
export class ConfigError extends StartupError {
  override name = 'ConfigError';
}

const DEFAULT_DB_URL = 'sqlite:./data/books.db';
const DEFAULT_USERNAME = 'admin';
const DEFAULT_PASSWORD = 'password';
const MIN_SECRET_BYTES = 32;
/** CHANGES_RETENTION's ceiling: 30 days. */
const MAX_CHANGES_RETENTION_S = 30 * 86_400;
/** IDEMPOTENCY_TTL's ceiling: 30 days. */
const MAX_IDEMPOTENCY_TTL_S = 30 * 86_400;
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

type Env = Record<string, string | undefined>;

/** Reads `.env` from `cwd` if present. Variables already in the environment win. */
function readDotEnv(cwd: string): Env {
  let content: string;
  try {
    content = readFileSync(resolve(cwd, '.env'), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`cannot read ${resolve(cwd, '.env')}: ${(error as Error).message}`);
  }
  return parseEnv(content);
}

export interface LoadOptions {
  /** False for commands that sign nothing (`migrate`): a missing SECRET_TOKEN is then fine. */
  requireSecret?: boolean;
}

export function loadConfig(processEnv: Env, cwd: string, { requireSecret = true }: LoadOptions = {}): Readonly<Config> {
  const env: Env = { ...readDotEnv(cwd), ...withoutEmpty(processEnv) };
  const warnings: string[] = [];

  const dbUrl = env.DB_URL ?? DEFAULT_DB_URL;
  const store = parseStoreUrl(dbUrl, cwd, ConfigError);

  let secret = env.SECRET_TOKEN ?? '';
  if (!secret && requireSecret) {
    if (store.kind !== 'sqlite' || store.file === ':memory:') {
      throw new ConfigError(
        `SECRET_TOKEN is not set: it is required to sign and verify tokens, the same on every instance; make one with node -e "console.log(require('node:crypto').randomBytes(32).toString('base64url'))"`,
      );
    }
    const kept = keptSecret(store.file);
    secret = kept.secret;
    warnings.push(`SECRET_TOKEN is not set: using the one ${kept.created ? 'made now and ' : ''}kept in ${kept.file} (owner-only; set SECRET_TOKEN to use your own)`);
  }
  if (secret && Buffer.byteLength(secret, 'utf8') < MIN_SECRET_BYTES) {
    warnings.push(
      `SECRET_TOKEN is shorter than ${MIN_SECRET_BYTES} bytes; use at least 256 bits of random data (RFC 7518 §3.2)`,
    );
  }

  const authUsername = env.AUTH_USERNAME ?? DEFAULT_USERNAME;
  const authPassword = env.AUTH_PASSWORD ?? DEFAULT_PASSWORD;
  if (env.AUTH_USERNAME === undefined || env.AUTH_PASSWORD === undefined) {
    warnings.push('AUTH_USERNAME/AUTH_PASSWORD not set: the built-in default credentials are in use');
  }

  const logLevel = (env.LOG_LEVEL ?? 'info').toLowerCase();
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}; got "${env.LOG_LEVEL}"`);
  }

  const config: Config = {
    http: {
      port: integer(env, 'PORT', 8080, 0, 65535),
      host: env.HOST ?? '0.0.0.0',
      requestTimeoutMs: seconds(env, 'REQUEST_TIMEOUT', 30),
      trustProxy: parseTrustProxy(env.TRUST_PROXY),
      corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
      metrics: boolean(env, 'METRICS', true),
      webUi: boolean(env, 'WEB_UI', true),
      nodeHttpParts: parseNodeHttpParts(env.NODE_HTTP_PARTS ?? oldMachinery(env, warnings)?.parts),
    },
    auth: {
      secret,
      verifyOnlySecrets: env.SECRET_TOKEN_PREVIOUS ? [env.SECRET_TOKEN_PREVIOUS] : [],
      username: authUsername,
      password: authPassword,
      loginRateLimit: integer(env, 'LOGIN_RATE_LIMIT', 10, 0, 1_000_000),
      loginLimitStore: parseLoginLimitStore(env.LOGIN_LIMIT_STORE),
    },
    store: {
      target: store,
      description: describeStoreUrl(dbUrl),
      connectTimeoutMs: seconds(env, 'DB_CONNECT_TIMEOUT', 10),
      queryTimeoutMs: seconds(env, 'DB_QUERY_TIMEOUT', 5),
      migrationTimeoutMs: seconds(env, 'DB_MIGRATION_TIMEOUT', 600),
      poolMax: env.DB_POOL_MAX === undefined ? undefined : integer(env, 'DB_POOL_MAX', 10, 1, 10_000),
      idempotencyTtlMs: seconds(env, 'IDEMPOTENCY_TTL', 86_400, MAX_IDEMPOTENCY_TTL_S),
    },
    changes: {
      retentionMs: seconds(env, 'CHANGES_RETENTION', 86_400, MAX_CHANGES_RETENTION_S),
      maxStreams: integer(env, 'CHANGES_MAX_STREAMS', 1_000, 0, 100_000),
    },
    logLevel,
    workers: integer(env, 'WORKERS', 1, 1, 1024),
    fastPaths: withoutHeapSizing(parseFastPaths(env.FAST_PATHS ?? oldMachinery(env)?.fastPaths), boolean(env, 'HEAP_SIZING', true)),
    tracing: parseTracingSettings(env, ConfigError),
    warnings,
  };
  return Object.freeze(config);
}

/** What `book-service import FILE` needs: the running service to send to, and the account to sign in with. */
export interface ImportSettings {
  /** The service's base URL (SERVICE_URL), without a trailing slash. */
  serviceUrl: string;
  username: string;
  password: string;
}

/**
 * The import command's settings, from the same environment and `.env` as the service's: run on
 * the service's own machine, it finds it at PORT on this host and signs in as AUTH_USERNAME.
 */
export function loadImportSettings(processEnv: Env, cwd: string): ImportSettings {
  const env: Env = { ...readDotEnv(cwd), ...withoutEmpty(processEnv) };
  const raw = env.SERVICE_URL ?? `http://127.0.0.1:${integer(env, 'PORT', 8080, 1, 65535)}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`SERVICE_URL must be the service's http:// or https:// URL, such as http://books.example:8080; got "${raw}"`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new ConfigError('SERVICE_URL must not hold a user name or password: the import signs in with AUTH_USERNAME and AUTH_PASSWORD');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`SERVICE_URL must be the service's http:// or https:// URL, such as http://books.example:8080; got "${raw}"`);
  }
  return {
    serviceUrl: url.href.replace(/\/+$/, ''),
    username: env.AUTH_USERNAME ?? DEFAULT_USERNAME,
    password: env.AUTH_PASSWORD ?? DEFAULT_PASSWORD,
  };
}

/** The secret kept beside the SQLite file; a file that cannot be made or read stops the start, naming it. */
function keptSecret(dbFile: string): KeptSecret {
  try {
    return secretBesideStore(dbFile);
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    throw new ConfigError(`SECRET_TOKEN is not set, and no secret can be kept in ${dbFile}.secret (${code ?? message}): set SECRET_TOKEN`);
  }
}

function withoutEmpty(env: Env): Env {
  // An empty variable means "not set", so `PORT= npm start` keeps the default.
  const result: Env = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== '') result[key] = value;
  return result;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; got "${raw}"`);
  }
  return Number(raw);
}

function seconds(env: Env, name: string, fallback: number, max = 3600): number {
  const raw = env[name];
  if (raw === undefined) return fallback * 1000;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !(value > 0) || value > max) {
    throw new ConfigError(`${name} must be a number of seconds greater than 0 (at most ${max}); got "${raw}"`);
  }
  return Math.round(value * 1000);
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false; got "${env[name]}"`);
}

function parseCorsOrigins(raw: string | undefined): string[] | '*' | undefined {
  if (raw === undefined) return undefined;
  if (raw.trim() === '*') return '*';
  const origins = raw
    .split(',')
    .map((origin) => origin.trim())
    .filter(Boolean);
  return origins.length > 0 ? origins : undefined;
}

/** `memory` (default) or `redis://[user:password@]host[:port][/db]` (also `rediss://`). */
function parseLoginLimitStore(raw: string | undefined): LoginLimitStore {
  const value = raw?.trim();
  if (value === undefined || value.toLowerCase() === 'memory') return { kind: 'memory' };
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  const db = url?.pathname.replace(/^\//, '') ?? '';
  if (!url || (url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '' || !/^\d*$/.test(db)) {
    throw new ConfigError(`LOGIN_LIMIT_STORE must be memory or a redis://host:port[/db] URL; got "${describeStoreUrl(value)}"`);
  }
  return { kind: 'redis', url: value, description: describeStoreUrl(value) };
}

/** `false` (default), `true` (any proxy), a hop count, or comma-separated addresses / CIDRs. */
function parseTrustProxy(raw: string | undefined): boolean | number | string[] {
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (['false', '0', 'no', 'off'].includes(value)) return false;
  if (['true', 'yes', 'on'].includes(value)) return true;
  if (/^\d+$/.test(value)) return Number(value);
  const entries = value.split(',').map((entry) => entry.trim()).filter(Boolean);
  if (entries.length === 0 || !entries.every((entry) => /^[0-9a-f.:]+(\/\d{1,3})?$|^(loopback|linklocal|uniquelocal)$/.test(entry))) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count or comma-separated addresses/CIDRs; got "${raw}"`);
  }
  return entries;
}

/**
 * FAST_PATHS: `on` (default: every speed path), `off` (none: the plain service), a
 * comma-separated list of the paths to turn on, or of `-name`s to turn off from all of them.
 */
export function parseFastPaths(raw: string | undefined): ReadonlySet<FastPathName> {
  const value = raw?.trim().toLowerCase();
  if (value === undefined || value === 'on') return new Set(FAST_PATH_NAMES);
  if (value === 'off') return new Set();
  const entries = value.split(',').map((name) => name.trim()).filter(Boolean);
  const named = entries.map((entry) => entry.replace(/^-/, ''));
  const removing = entries.filter((entry) => entry.startsWith('-')).length;
  const unknown = named.filter((name) => !(FAST_PATH_NAMES as readonly string[]).includes(name));
  if (entries.length === 0 || unknown.length > 0 || (removing > 0 && removing < entries.length)) {
    throw new ConfigError(
      `FAST_PATHS must be on, off, a comma-separated list of the paths to turn on, or of -paths to turn off (${FAST_PATH_NAMES.join(', ')}); got "${raw}"`,
    );
  }
  const chosen = new Set(named as FastPathName[]);
  return new Set(FAST_PATH_NAMES.filter((name) => (removing > 0 ? !chosen.has(name) : chosen.has(name))));
}

/** HEAP_SIZING=false, the older switch of one path, takes heap-sizing out of the speed paths. */
function withoutHeapSizing(paths: ReadonlySet<FastPathName>, heapSizing: boolean): ReadonlySet<FastPathName> {
  if (heapSizing) return paths;
  const without = new Set(paths);
  without.delete('heap-sizing');
  return without;
}

/**
 * HTTP_MACHINERY, the switch before FAST_PATHS and NODE_HTTP_PARTS, still honoured for one
 * release (with a warning): `off` is both off, `on` both on, and a list of parts keeps those
 * protocol parts on and answer-in-turns (the one speed path it switched) only if listed.
 */
function oldMachinery(env: Env, warnings?: string[]): { fastPaths: string; parts: string } | undefined {
  const raw = env.HTTP_MACHINERY?.trim().toLowerCase();
  if (raw === undefined) return undefined;
  warnings?.push('HTTP_MACHINERY is deprecated and will be removed: use FAST_PATHS (the speed paths) and NODE_HTTP_PARTS (the protocol parts)');
  if (raw === 'on' || raw === 'off') return { fastPaths: raw, parts: raw };
  const names = raw.split(',').map((name) => name.trim()).filter(Boolean);
  const known = ['answer-in-turns', ...NODE_HTTP_PARTS.map(settingName)];
  if (names.length === 0 || names.some((name) => !known.includes(name))) {
    throw new ConfigError(`HTTP_MACHINERY (deprecated) must be on, off or a comma-separated list of ${known.join(', ')}; got "${env.HTTP_MACHINERY}"`);
  }
  const parts = names.filter((name) => name !== 'answer-in-turns');
  return { fastPaths: names.includes('answer-in-turns') ? 'on' : '-answer-in-turns', parts: parts.length > 0 ? parts.join(',') : 'off' };
}

/**
 * NODE_HTTP_PARTS: `on` (default: every part), `off` (none: plain Fastify and Node), or a
 * comma-separated list of the parts to keep on, by their setting names (src/http/node/index.ts).
 */
export function parseNodeHttpParts(raw: string | undefined): NodeHttpParts {
  const value = raw?.trim().toLowerCase();
  const every = (on: boolean) => Object.fromEntries(NODE_HTTP_PARTS.map((part) => [part, on])) as NodeHttpParts;
  if (value === undefined || value === 'on') return every(true);
  if (value === 'off') return every(false);
  const names = value.split(',').map((name) => name.trim()).filter(Boolean);
  const known = NODE_HTTP_PARTS.map(settingName);
  const unknown = names.filter((name) => !known.includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new ConfigError(
      `NODE_HTTP_PARTS must be on, off or a comma-separated list of the parts to keep on (${known.join(', ')}); got "${raw}"`,
    );
  }
  const parts = every(false);
  for (const part of NODE_HTTP_PARTS) if (names.includes(settingName(part))) parts[part] = true;
  return parts;
}
