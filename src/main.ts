#!/usr/bin/env node
// Entry point: command line → config → store → app → listen; signals and graceful shutdown.
// An expected startup failure prints one line naming the cause and exits 1.
import cluster from 'node:cluster';
import { parseArgs } from 'node:util';
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { createClusterLoginLimiter, serveLoginLimitToWorkers } from './auth/cluster-login-limiter.js';
import { ConfigError, loadConfig, type Config, type LoadOptions } from './config.js';
import { createLogger } from './logger.js';
import type { BookStore } from './store/book-store.js';
import { StoreStartupError, openStore } from './store/open-store.js';
import { VERSION } from './version.js';

const SHUTDOWN_GRACE_MS = 10_000;
const SHUTDOWN_MESSAGE = 'book-service:shutdown';
const DUPLICATE_SIGNAL_WINDOW_MS = 1_000;

const USAGE = `Usage:
  node dist/main.js [serve]    start the service (the default)
  node dist/main.js migrate    create or migrate the store's schema, then exit
  node dist/main.js --help     this text
  node dist/main.js --version  the version
`;

const HELP = `book-service ${VERSION}: the book collection service

${USAGE}
Configuration comes from the environment and from .env in the working directory
(the environment wins; an empty variable counts as unset):
  SECRET_TOKEN        required: the HMAC key that signs tokens (32+ random bytes)
  DB_URL              sqlite:./data/books.db | postgres://… | mysql://… (default: SQLite)
  PORT, HOST          8080, 0.0.0.0
  AUTH_USERNAME       admin      the single built-in account
  AUTH_PASSWORD       password
  LOG_LEVEL           info       fatal, error, warn, info, debug, trace, silent
  LOGIN_RATE_LIMIT    10         failed logins a minute per client address; 0 = off
  TRUST_PROXY         false      true, a hop count, or proxy addresses/CIDRs
  DB_CONNECT_TIMEOUT  10         seconds to wait for the store at startup
  DB_QUERY_TIMEOUT    5          seconds one store query may take (then 503)
  DB_POOL_MAX         10         connections per process (PostgreSQL, MySQL)
  REQUEST_TIMEOUT     30         seconds a client has to send a whole request
  CORS_ORIGINS        off        comma-separated browser origins, or *
  METRICS             true       serve /metrics
  WORKERS             1          processes sharing the port
See README.md and .env.example.
`;

/** A mistake on the command line: one line, then the usage, exit 2. */
class UsageError extends Error {}

/** A startup failure: one line naming the setting and the cause, exit 1. */
function failStartup(reason: string): never {
  process.stderr.write(`book-service: cannot start: ${reason}\n`);
  process.exit(1);
}

function readConfig(options?: LoadOptions): Readonly<Config> {
  try {
    return loadConfig(process.env, process.cwd(), options);
  } catch (error) {
    if (error instanceof ConfigError) failStartup(error.message);
    throw error;
  }
}

async function openConfiguredStore(config: Readonly<Config>, logger: Logger): Promise<BookStore> {
  try {
    return await openStore(config.store, logger);
  } catch (error) {
    if (error instanceof StoreStartupError) failStartup(error.message);
    throw error;
  }
}

/** `migrate`: opening the store applies pending migrations; then close and exit. */
async function migrate() {
  const config = readConfig({ requireSecret: false });
  const logger = createLogger(config.logLevel);
  const store = await openConfiguredStore(config, logger);
  await store.close();
  logger.info({ url: config.store.description }, 'store schema is up to date');
  logger.flush();
}

/** WORKERS > 1: migrate once here, then fork the workers that serve; relay signals to them. */
async function superviseWorkers(config: Readonly<Config>, logger: Logger) {
  await (await openConfiguredStore(config, logger)).close();
  // The failed-login limit counts across all workers, as in one process.
  serveLoginLimitToWorkers(config.auth.loginRateLimit);
  let stopping = false;
  const fork = () => cluster.fork();
  for (let i = 0; i < config.workers; i++) fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        logger.info('all workers stopped');
        logger.flush();
        process.exit(0);
      }
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
    fork();
  });
  onStopSignals(
    (signal) => {
      stopping = true;
      logger.info({ signal, workers: config.workers }, 'stopping workers');
      // A message, not a signal: on Ctrl-C the terminal already signals every worker, and a
      // second signal would force them out without draining.
      for (const worker of Object.values(cluster.workers ?? {})) worker?.send(SHUTDOWN_MESSAGE);
      setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 1_000).unref();
    },
    () => {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    },
  );
}

async function serve() {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  if (cluster.isPrimary) for (const warning of config.warnings) logger.warn(warning);
  if (cluster.isPrimary && config.workers > 1) return superviseWorkers(config, logger);

  const store = await openConfiguredStore(config, logger);
  // Cluster workers share one failed-login count (kept by the primary).
  const loginLimiter = cluster.isWorker ? await createClusterLoginLimiter(config.auth.loginRateLimit) : undefined;
  const app = await buildApp({ config, store, logger, loginLimiter });
  try {
    await app.listen({ port: config.http.port, host: config.http.host });
  } catch (error) {
    await store.close().catch(() => undefined);
    failStartup(describeListenFailure(error, config.http));
  }
  logger.info({ store: config.store.target.kind, url: config.store.description, version: VERSION }, 'book service ready');

  let shuttingDown = false;
  async function shutdown(signal: NodeJS.Signals) {
    if (shuttingDown) return;
    shuttingDown = true;
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    const forceExit = setTimeout(() => {
      logger.error('shutdown took too long: exiting');
      logger.flush();
      process.exit(1);
    }, SHUTDOWN_GRACE_MS);
    forceExit.unref();
    // Node stops enforcing REQUEST_TIMEOUT once the server is closing: cut connections that
    // still have not finished sending their request before the grace period runs out.
    setTimeout(() => app.server.closeAllConnections(), Math.min(config.http.requestTimeoutMs, SHUTDOWN_GRACE_MS - 1_000)).unref();
    try {
      await app.close(); // stops accepting, waits for in-flight requests
      await store.close();
      logger.info('shutdown complete');
      logger.flush();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      logger.flush();
      process.exit(1);
    }
  }
  onStopSignals(
    (signal) => void shutdown(signal),
    (signal) => {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(1);
    },
  );
  if (cluster.isWorker) {
    process.on('message', (message) => message === SHUTDOWN_MESSAGE && void shutdown('SIGTERM'));
  }
}

/** Why the server could not listen, naming the setting to fix. */
function describeListenFailure(error: unknown, { host, port }: Readonly<Config>['http']): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `HOST "${host}" does not resolve to an address of this machine (${code})`;
    case 'EADDRNOTAVAIL':
      return `HOST "${host}" is not an address of this machine (${code})`;
    case 'EADDRINUSE':
      return `PORT ${port} is already in use on ${host} (${code})`;
    case 'EACCES':
      return `no permission to listen on PORT ${port} (${code}): ports below 1024 need privileges`;
    default:
      return `cannot listen on ${host}:${port} (PORT, HOST): ${code ?? message}`;
  }
}

/**
 * SIGTERM/SIGINT: the first starts a graceful stop, a second one forces the exit. The same
 * signal again within a second is the same request delivered twice (Ctrl-C under `npm start`
 * reaches the service from the terminal and again from npm, which forwards it): ignored.
 */
function onStopSignals(stopGracefully: (signal: NodeJS.Signals) => void, stopNow: (signal: NodeJS.Signals) => void) {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = { signal, at: Date.now() };
      stopGracefully(signal);
    } else if (signal !== first.signal || Date.now() - first.at >= DUPLICATE_SIGNAL_WINDOW_MS) {
      stopNow(signal);
    }
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

type Command = 'serve' | 'migrate' | 'help' | 'version';

/** The command line: `[serve|migrate]`, `--help`, `--version`; anything else is a UsageError. */
function parseCommandLine(args: string[]): Command {
  const { tokens } = parseArgs({ args, strict: false, allowPositionals: true, tokens: true });
  const positionals: string[] = [];
  let command: Command | undefined;
  for (const token of tokens) {
    if (token.kind === 'positional') positionals.push(token.value);
    if (token.kind !== 'option') continue;
    if (token.name !== 'help' && token.name !== 'h' && token.name !== 'version' && token.name !== 'v') {
      throw new UsageError(`unknown option ${token.rawName}`);
    }
    if (token.value !== undefined) throw new UsageError(`option ${token.rawName} takes no value`);
    command ??= token.name.startsWith('h') ? 'help' : 'version';
  }
  if (command) return command;
  if (positionals.length > 1) throw new UsageError(`unexpected argument ${positionals[1]}`);
  const [name = 'serve'] = positionals;
  if (name !== 'serve' && name !== 'migrate') throw new UsageError(`unknown command ${name}`);
  return name;
}

async function main() {
  let command: Command;
  try {
    command = parseCommandLine(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`book-service: ${error.message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (command === 'help') return void process.stdout.write(HELP);
  if (command === 'version') return void process.stdout.write(`${VERSION}\n`);
  return command === 'migrate' ? migrate() : serve();
}

main().catch((error: unknown) => {
  // Anything unexpected at startup is still one line; LOG_LEVEL=debug adds the stack.
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const debug = /^(debug|trace)$/i.test(process.env.LOG_LEVEL ?? '');
  process.stderr.write(`book-service: cannot start: ${message.split('\n')[0]}\n`);
  if (debug && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
