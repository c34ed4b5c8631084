// WORKERS > 1: the primary migrates once, forks the workers that serve (node:cluster, one
// shared port), restarts a worker that dies, keeps the shared failed-login count, and passes
// a stop request on to every worker.
import cluster from 'node:cluster';
import { getHeapStatistics } from 'node:v8';
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
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS) });
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

/** Each worker's V8 heap ceiling, unless the operator chose one (NODE_OPTIONS or a node flag). */
export const WORKER_HEAP_LIMIT_MIB = 1024;
const HEAP_LIMIT_FLAG = /--max[-_](old[-_]space|heap)[-_]size/;

/**
 * The workers' node flags: the primary's, and a heap ceiling of 1 GiB when that is lower than
 * Node's own default. Why: with a ceiling of 2 GiB or more (Node's default on a machine with
 * 8 GiB or more), V8 lets its heap grow up to 4× between full collections, against 1.6× at
 * 1 GiB. Under the bench's load on PostgreSQL that lowered each worker's peak RSS with no
 * throughput change beyond noise, where a lower ceiling cost throughput on GET /books
 * (docs/benchmarks-changes.md, "Memory"). A container's memory limit already lowers Node's
 * default; then nothing is added.
 * An operator's own choice in NODE_OPTIONS is looked for by name: a flag on the workers' command
 * line would take precedence over it.
 */
export function workerExecArgv(primaryExecArgv: readonly string[], nodeOptions: string | undefined): string[] {
  const chosen = HEAP_LIMIT_FLAG.test(primaryExecArgv.join(' ')) || HEAP_LIMIT_FLAG.test(nodeOptions ?? '');
  const defaultLimitMiB = getHeapStatistics().heap_size_limit / 2 ** 20;
  if (chosen || defaultLimitMiB <= WORKER_HEAP_LIMIT_MIB) return [...primaryExecArgv];
  return [...primaryExecArgv, `--max-old-space-size=${WORKER_HEAP_LIMIT_MIB}`];
}
