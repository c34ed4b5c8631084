#!/usr/bin/env node
// Entry point: config → store → app → listen; signals and graceful shutdown.
// An expected startup failure prints one line naming the cause and exits 1.
import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './logger.js';
import type { BookStore } from './store/book-store.js';
import { StoreStartupError, openStore } from './store/open-store.js';

const SHUTDOWN_GRACE_MS = 10_000;

function failStartup(reason: string): never {
  process.stderr.write(`book-service: cannot start: ${reason}\n`);
  process.exit(1);
}

async function main() {
  let config;
  try {
    config = loadConfig(process.env, process.cwd());
  } catch (error) {
    if (error instanceof ConfigError) failStartup(error.message);
    throw error;
  }

  const logger = createLogger(config.logLevel);
  for (const warning of config.warnings) logger.warn(warning);

  let store: BookStore;
  try {
    store = await openStore(config.store, {
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

  const app = await buildApp({ config, store, logger });
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
  logger.info({ store: config.store.kind, url: config.storeDescription }, 'book store ready');

  let shuttingDown = false;
  async function shutdown(signal: NodeJS.Signals) {
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
}

main().catch((error: unknown) => {
  process.stderr.write(`book-service: fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
