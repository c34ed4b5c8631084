// WORKERS > 1: the primary migrates once, forks the workers that serve (node:cluster, one
// shared port), restarts a worker that dies, keeps the shared failed-login count, and passes
// a stop request on to every worker.
import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { serveLoginLimitToWorkers } from '../auth/cluster-login-limiter.js';
import type { Config } from '../config.js';
import { SHUTDOWN_GRACE_MS } from '../server.js';
import { openStore } from '../store/open-store.js';
import { STOP_MESSAGE, onStopSignals } from './stop-signals.js';

export async function superviseWorkers(config: Readonly<Config>, logger: Logger) {
  await (await openStore(config.store, logger)).close();
  if (config.auth.loginLimitStore.kind === 'memory') serveLoginLimitToWorkers(config.auth.loginRateLimit);
  const workers = () => Object.values(cluster.workers ?? {});
  let stopping = false;
  for (let i = 0; i < config.workers; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (!stopping) {
      logger.error({ pid: worker.process.pid, code, signal }, 'worker died; starting another');
      cluster.fork();
    } else if (workers().length === 0) {
      logger.info('all workers stopped');
      logger.flush();
      process.exit(0);
    }
  });
  onStopSignals(
    (signal) => {
      stopping = true;
      logger.info({ signal, workers: config.workers }, 'stopping workers');
      // A message, not a signal: on Ctrl-C the terminal already signals every worker, and a
      // second signal would force them out without draining.
      for (const worker of workers()) worker?.send(STOP_MESSAGE);
      setTimeout(() => process.exit(1), SHUTDOWN_GRACE_MS + 1_000).unref();
    },
    () => {
      for (const worker of workers()) worker?.process.kill('SIGKILL');
      process.exit(1);
    },
  );
}
