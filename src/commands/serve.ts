// `serve` (the default command): one process serving until SIGTERM/SIGINT, then a graceful
// stop; with WORKERS > 1 the primary supervises workers instead (supervise.ts).
import cluster from 'node:cluster';
import { createClusterLoginLimiter } from '../auth/cluster-login-limiter.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { nodeFlagsOf, sizeHeap } from '../runtime/heap-sizing.js';
import { SHUTDOWN_GRACE_MS, startServer } from '../server.js';
import { VERSION } from '../version.js';
import { STOP_MESSAGE, onStopSignals } from './stop-signals.js';
import { superviseWorkers } from './supervise.js';

export async function serve() {
  const config = loadConfig(process.env, process.cwd());
  // Before the app is built: building it is when the heap first grows.
  const heapSizing = sizeHeap(config.heapSizing, nodeFlagsOf(process.execArgv, process.env));
  const logger = createLogger(config.logLevel);
  if (cluster.isPrimary) for (const warning of config.warnings) logger.warn(warning);
  if (cluster.isPrimary && config.workers > 1) return superviseWorkers(config, logger);

  // Cluster workers share one failed-login count, kept by the primary (or by Redis, for every instance).
  const sharedByPrimary = cluster.isWorker && config.auth.loginLimitStore.kind === 'memory';
  const loginLimiter = sharedByPrimary ? await createClusterLoginLimiter(config.auth.loginRateLimit) : undefined;
  const server = await startServer(config, logger, { loginLimiter });
  heapSizing.watch();
  logger.info({ store: config.store.target.kind, url: config.store.description, version: VERSION }, 'book service ready');

  const exit = (code: number) => {
    logger.flush();
    process.exit(code);
  };
  const stopGracefully = (signal: NodeJS.Signals) => {
    logger.info({ signal }, 'shutting down: draining in-flight requests');
    setTimeout(() => {
      logger.error('shutdown took too long: exiting');
      exit(1);
    }, SHUTDOWN_GRACE_MS).unref();
    server.stop().then(
      () => {
        logger.info('shutdown complete');
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  onStopSignals(stopGracefully, (signal) => {
    logger.warn({ signal }, 'second signal: exiting now');
    exit(1);
  });
  if (cluster.isWorker) process.on('message', (message) => message === STOP_MESSAGE && stopGracefully('SIGTERM'));
}
