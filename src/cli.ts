// The command line: `[serve|migrate|backup FILE|import FILE [--dry-run]]`, `--help`, `--version`.
// A mistake is a UsageError.
import { parseArgs } from 'node:util';
import { VERSION } from './version.js';

export type Command =
  | { name: 'serve' | 'migrate' | 'help' | 'version' }
  /** Copy the SQLite store to `file` (docs/operations.md "Backup and restore"). */
  | { name: 'backup'; file: string }
  /** Add the books of a JSON or CSV file to the running service at SERVICE_URL (docs/operations.md "Importing a collection"). */
  | { name: 'import'; file: string; dryRun: boolean };

export const USAGE = `Usage:
  node dist/main.js [serve]    start the service (the default)
  node dist/main.js migrate    create or migrate the store's schema, then exit
  node dist/main.js backup FILE  copy the SQLite store to FILE while the service runs
  node dist/main.js import FILE [--dry-run]  add the books of a JSON or CSV file to the
                               service at SERVICE_URL (--dry-run: check the file, send nothing)
  node dist/main.js --help     this text
  node dist/main.js --version  the version
`;

export const HELP = `book-service ${VERSION}: the book collection service

${USAGE}
Configuration comes from the environment and from .env in the working directory
(the environment wins; an empty variable counts as unset):
  SECRET_TOKEN        the HMAC key that signs tokens (32+ random bytes); required with a server
                      store; unset with a SQLite file: made once, kept in <file>.secret
  SECRET_TOKEN_PREVIOUS unset    a key tokens are verified with, never signed with (a rotation)
  DB_URL              sqlite:./data/books.db | postgres://… | mysql://… (default: SQLite)
                      several hosts: mysql://u:pw@h1:3306,h2:3306/db (failover)
  PORT, HOST          8080, 0.0.0.0
  AUTH_USERNAME       admin      the single built-in account
  AUTH_PASSWORD       password
  LOG_LEVEL           info       fatal, error, warn, info, debug, trace, silent
  LOGIN_RATE_LIMIT    10         failed logins a minute per client address; 0 = off
  LOGIN_LIMIT_STORE   memory     where they are counted: memory, or redis://host:port[/db] for all instances
  TRUST_PROXY         false      true, a hop count, or proxy addresses/CIDRs
  DB_CONNECT_TIMEOUT  10         seconds to wait for the store at startup
  DB_QUERY_TIMEOUT    5          seconds one store query may take (then 503)
  DB_MIGRATION_TIMEOUT 600       seconds one migration statement may take
  DB_POOL_MAX         10         connections per process (PostgreSQL, MySQL)
  IDEMPOTENCY_TTL     86400      seconds an Idempotency-Key and its stored answer are kept
  CHANGES_RETENTION   86400      seconds changes are kept for GET /books/changes (an older cursor: 410)
  CHANGES_MAX_STREAMS 1000       change streams one process serves at once (one more: 503)
  REQUEST_TIMEOUT     30         seconds a client has to send a whole request
  CORS_ORIGINS        off        comma-separated browser origins, or *
  METRICS             true       serve /metrics
  WEB_UI              true       serve the web page at / (false: / is 404 as any unknown path)
  WORKERS             1          processes sharing the port
  SERVICE_URL         http://127.0.0.1:PORT  the running service import sends to (signing
                      in as AUTH_USERNAME with AUTH_PASSWORD)
  FAST_PATHS          on         the speed paths (src/fast/): on, off, the paths to turn on, or -paths
                      to turn off: answer-in-turns, shared-lists, batched-queries, group-commit,
                      counted-metrics, one-read-body, batched-log, token-cache,
                      precompiled-schemas, lazy-api-reference, heap-sizing (docs/benchmarks.md)
  NODE_HTTP_PARTS     on         the Node HTTP layer's protocol fixes: on, off, or the parts to keep on:
                      pipeline-in-order, answer-half-closed-clients, lingering-close,
                      ignore-unknown-expect, finish-answers-on-client-error
  HEAP_SIZING         true       false: FAST_PATHS without heap-sizing (V8's own heap sizing)
  HTTP_MACHINERY      -          deprecated: sets both FAST_PATHS and NODE_HTTP_PARTS (on, off)
  OTEL_EXPORTER_OTLP_ENDPOINT off  traces to an OpenTelemetry collector (OTLP over HTTP), e.g.
                      http://otel-collector:4318; also honoured (docs/operations.md, Traces):
                      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_TRACES_EXPORTER, OTEL_SDK_DISABLED,
                      OTEL_EXPORTER_OTLP_PROTOCOL, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
                      OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TRACES_HEADERS,
                      OTEL_EXPORTER_OTLP_TIMEOUT, OTEL_EXPORTER_OTLP_TRACES_TIMEOUT,
                      OTEL_EXPORTER_OTLP_COMPRESSION, OTEL_EXPORTER_OTLP_TRACES_COMPRESSION,
                      OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER,
                      OTEL_TRACES_SAMPLER_ARG, OTEL_PROPAGATORS, OTEL_BSP_SCHEDULE_DELAY,
                      OTEL_BSP_MAX_QUEUE_SIZE, OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_EXPORT_TIMEOUT
See README.md and .env.example.
`;

/** A mistake on the command line: one line, then the usage, exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

const FLAGS = new Map<string, 'help' | 'version'>([
  ['help', 'help'],
  ['h', 'help'],
  ['version', 'version'],
  ['v', 'version'],
]);

/** The settings of README "Configuration": read from the environment, never from the command line. */
const SETTINGS = new Set([
  'SECRET_TOKEN', 'SECRET_TOKEN_PREVIOUS', 'DB_URL', 'PORT', 'HOST', 'AUTH_USERNAME', 'AUTH_PASSWORD', 'LOG_LEVEL', 'LOGIN_RATE_LIMIT',
  'LOGIN_LIMIT_STORE', 'TRUST_PROXY', 'DB_CONNECT_TIMEOUT', 'DB_QUERY_TIMEOUT', 'DB_MIGRATION_TIMEOUT', 'DB_POOL_MAX',
  'IDEMPOTENCY_TTL', 'CHANGES_RETENTION', 'CHANGES_MAX_STREAMS', 'REQUEST_TIMEOUT', 'CORS_ORIGINS', 'METRICS', 'WEB_UI', 'WORKERS',
  'SERVICE_URL',
]);

/** For an option named like a setting (`--port`, `--db-url`): how to give that setting instead. */
function settingHint(option: string): string {
  const name = option.toUpperCase().replaceAll('-', '_');
  return SETTINGS.has(name) ? `: settings are environment variables, as in ${name}=… npm start (README "Configuration")` : '';
}

export function parseCommandLine(args: string[]): Command {
  const { tokens } = parseArgs({ args, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  let flag: 'help' | 'version' | undefined;
  let dryRun = false;
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const command = token.name === 'dry-run' ? 'dry-run' : FLAGS.get(token.name);
    if (command === undefined) throw new UsageError(`unknown option ${token.rawName}${settingHint(token.name)}`);
    if (token.value !== undefined) throw new UsageError(`option ${token.rawName} takes no value`);
    if (command === 'dry-run') dryRun = true;
    else flag ??= command;
  }
  if (flag) return { name: flag };
  const [name = 'serve', ...rest] = positionals;
  if (dryRun && name !== 'import') throw new UsageError('option --dry-run is for import only');
  if (name === 'backup' || name === 'import') {
    if (rest.length === 0) throw new UsageError(name === 'backup' ? 'backup needs the FILE to write the copy to' : 'import needs the FILE of books to import (JSON or CSV)');
    if (rest.length > 1) throw new UsageError(`unexpected argument ${rest[1]}`);
    return name === 'backup' ? { name, file: rest[0]! } : { name, file: rest[0]!, dryRun };
  }
  if (name !== 'serve' && name !== 'migrate') throw new UsageError(`unknown command ${name}`);
  if (rest.length > 0) throw new UsageError(`unexpected argument ${rest[0]}`);
  return { name };
}
