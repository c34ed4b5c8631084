// `serve` (the default command): one process serving until SIGTERM/SIGINT, then a graceful
// stop; with WORKERS > 1 the primary supervises workers instead (supervise.ts).
import cluster from 'node:cluster';
import { createClusterLoginLimiter } from '../auth/cluster-login-limiter.js';
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { NO_FAST_PATHS, type LoadFastPaths } from '../seams.js';
import { SHUTDOWN_GRACE_MS, startServer } from '../server.js';
import { VERSION } from '../version.js';
import { listenForStopMessage, onStopSignals } from './stop-signals.js';
import { superviseWorkers } from './supervise.js';

/** `loadFastPaths`: the speed paths' loader (src/main.ts); called only when FAST_PATHS turns one on. */
export async function serve(loadFastPaths?: LoadFastPaths) {
  // Before the first await: a stop the primary asks for while this worker starts is kept.
  const onStopMessage = cluster.isWorker ? listenForStopMessage() : undefined;
  const config = loadConfig(process.env, process.cwd());
  const fastPaths = loadFastPaths && config.fastPaths.size > 0 ? await loadFastPaths(config.fastPaths) : NO_FAST_PATHS;
  // Before the app is built: building it is when the heap first grows.
  const heapSizing = fastPaths.sizeHeap?.(nodeFlagsOf(process.execArgv, process.env));
  const logger = createLogger(config.logLevel, undefined, fastPaths.logDestination);
  if (cluster.isPrimary) for (const warning of config.warnings) logger.warn(warning);
  if (cluster.isPrimary && config.workers > 1) return superviseWorkers(config, logger);

  // Cluster workers share one failed-login count, kept by the primary (or by Redis, for every instance).
  const sharedByPrimary = cluster.isWorker && config.auth.loginLimitStore.kind === 'memory';
  const loginLimiter = sharedByPrimary ? await createClusterLoginLimiter(config.auth.loginRateLimit) : undefined;
  const server = await startServer(config, logger, { loginLimiter, fastPaths });
  heapSizing?.watch();
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
  onStopMessage?.(() => stopGracefully('SIGTERM'));
}

/** What the operator gave Node: its command-line flags and NODE_OPTIONS (a speed path leaves their choices alone). */
function nodeFlagsOf(execArgv: readonly string[], env: NodeJS.ProcessEnv): string {
  return [...execArgv, env.NODE_OPTIONS ?? ''].join(' ');
}
