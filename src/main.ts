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

const HELP = `book-service ${VERSION}: the book collection service

Usage:
  node dist/main.js [serve]    start the service (the default)
  node dist/main.js migrate    create or migrate the store's schema, then exit
  node dist/main.js --help     this text
  node dist/main.js --version  the version

Configuration comes from the environment and from .env in the working directory:
  SECRET_TOKEN (required), DB_URL (default sqlite:./data/books.db), PORT (8080), HOST (0.0.0.0),
  AUTH_USERNAME, AUTH_PASSWORD, LOG_LEVEL, LOGIN_RATE_LIMIT, DB_CONNECT_TIMEOUT, DB_QUERY_TIMEOUT,
  DB_POOL_MAX, REQUEST_TIMEOUT, CORS_ORIGINS, METRICS, WORKERS. See README.md and .env.example.
`;

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
    return await openStore(config.store, {
      connectTimeoutMs: config.dbConnectTimeoutMs,
      queryTimeoutMs: config.dbQueryTimeoutMs,
      poolMax: config.dbPoolMax,
      logger,
      description: config.storeDescription,
    });
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
  logger.info({ url: config.storeDescription }, 'store schema is up to date');
  logger.flush();
}

/** WORKERS > 1: migrate once here, then fork the workers that serve; relay signals to them. */
async function superviseWorkers(config: Readonly<Config>, logger: Logger) {
  await (await openConfiguredStore(config, logger)).close();
  // The failed-login limit counts across all workers, as in one process.
  serveLoginLimitToWorkers(config.loginRateLimit);
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
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal, workers: config.workers }, 'stopping workers');
    // A message, not a signal: on Ctrl-C the terminal already signals every worker, and a
    // second signal would force them out without draining.
    for (const worker of Object.values(cluster.workers ?? {})) worker?.send(SHUTDOWN_MESSAGE);
    setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 1_000).unref();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

async function serve() {
  const config = readConfig();
  const logger = createLogger(config.logLevel);
  if (cluster.isPrimary) for (const warning of config.warnings) logger.warn(warning);
  if (cluster.isPrimary && config.workers > 1) return superviseWorkers(config, logger);

  const store = await openConfiguredStore(config, logger);
  // Cluster workers share one failed-login count (kept by the primary).
  const loginLimiter = cluster.isWorker ? await createClusterLoginLimiter(config.loginRateLimit) : undefined;
  const app = await buildApp({ config, store, logger, loginLimiter });
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    await store.close().catch(() => undefined);
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      failStartup(`cannot listen on ${config.host}:${config.port} (PORT, HOST): ${code}`);
    }
    throw error;
  }
  logger.info({ store: config.store.kind, url: config.storeDescription, version: VERSION }, 'book service ready');

  let shuttingDown = false;
  async function shutdown(signal: NodeJS.Signals, fromSupervisor = false) {
    if (shuttingDown && fromSupervisor) return;
    if (shuttingDown) {
      logger.warn({ signal }, 'second signal: exiting now');
      logger.flush();
      process.exit(1);
    }
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
    setTimeout(() => app.server.closeAllConnections(), Math.min(config.requestTimeoutMs, SHUTDOWN_GRACE_MS - 1_000)).unref();
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
  process.on('SIGTERM', (signal) => void shutdown(signal));
  process.on('SIGINT', (signal) => void shutdown(signal));
  if (cluster.isWorker) {
    process.on('message', (message) => message === SHUTDOWN_MESSAGE && void shutdown('SIGTERM', true));
  }
}

async function main() {
  let parsed;
  try {
    parsed = parseArgs({
      allowPositionals: true,
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
    });
  } catch (error) {
    process.stderr.write(`book-service: ${(error as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (parsed.values.help) return void process.stdout.write(HELP);
  if (parsed.values.version) return void process.stdout.write(`${VERSION}\n`);
  const [command = 'serve', ...rest] = parsed.positionals;
  if (rest.length > 0 || (command !== 'serve' && command !== 'migrate')) {
    process.stderr.write(`book-service: unknown command "${parsed.positionals.join(' ')}"\n\n${HELP}`);
    process.exit(2);
  }
  return command === 'migrate' ? migrate() : serve();
}

main().catch((error: unknown) => {
  process.stderr.write(`book-service: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
