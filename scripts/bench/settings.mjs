// Settings of a bench run: where things are, the fixed parameters (wrk threads and connections,
// book counts, samples, request bodies) and the environment variables with their defaults.
//
// Environment:
//   BENCH_ROUNDS        rounds (default 3)
//   BENCH_DURATION      seconds per measured run (default 5)
//   BENCH_WARMUP        seconds of warm-up before each run, not counted (default 2; 0 = none)
//   BENCH_SETTLE        seconds each scenario runs once, before the first round of each half,
//                       not counted (default 5; 0 = none): a fresh Node process compiles its hot
//                       code and fills its pools over its first seconds of load
//   BENCH_STORES        stores to run (default sqlite,postgres,mysql; mysql is MariaDB or MySQL)
//   BENCH_MODES         which halves to run (default core,machine):
//                         core     per core: each server (service, Go/Gin, node:http) pinned to
//                                  CPU 1 with `taskset -c 1`, wrk pinned to CPU 0; WORKERS=1
//                         machine  whole machine: nothing pinned, the service with the README's
//                                  dedicated-machine setting WORKERS=N (N = cores)
//   BENCH_WORKERS       N of the whole-machine half (default: the number of cores)
//   BENCH_TOOL          wrk (default) or autocannon (fallback, used when wrk is missing)
//   BENCH_GO            Go/Gin reference: unset = when it can be built, 0 = off,
//                       1 = required (a failure to build or start it is fatal)
//   GIN_LOGGER          1 = the Go/Gin reference logs every request (gin's logger) to its log file
//   BENCH_KEEP_LOGS     1 = keep the full service logs (default: only lines that are not 2xx
//                       "request completed" at info level are kept)
//   TEST_POSTGRES_URL   PostgreSQL server for the fresh database
//                       (default postgres://postgres@127.0.0.1:5432/postgres)
//   TEST_MYSQL_URL      MariaDB/MySQL server for the fresh database (default mysql://root@127.0.0.1:3306/)
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const MAIN_JS = join(ROOT, 'dist', 'main.js');
export const LUA_SCRIPT = join(ROOT, 'scripts', 'bench', 'scenario.lua');
export const RESULTS_DIR = join(ROOT, 'bench-results');
export const LOG_DIR = join(RESULTS_DIR, 'logs');
export const DOCS_FILE = join(ROOT, 'docs', 'benchmarks.md');
export const GO_DIR = join(ROOT, 'bench', 'go-gin');

export const THREADS = 1;
export const CONNECTIONS = 64;
export const SEED_BOOKS = 100;
export const LARGE_BOOKS = 10_000;
export const STARTUP_SAMPLES = 5;
export const SEQUENTIAL_SAMPLES = 20;
/** wrk's default 2 s timeout would drop (not time) the slowest 10,000-book answers. */
export const LARGE_LIST_TIMEOUT_S = 30;
const USERNAME = 'admin';
const PASSWORD = 'password';
export const BOOK_BODY = JSON.stringify({ title: 'Benchmark Book', author: 'Bench Author', year: 2024 });
export const CREDENTIALS_BODY = JSON.stringify({ username: USERNAME, password: PASSWORD });
/** What the bare node:http baseline answers to every request. */
export const BASELINE_BODY = JSON.stringify({
  status: 200,
  message: 'Book retrieved successfully',
  data: { id: 1, title: 'The Pragmatic Programmer', author: 'Andrew Hunt', year: 1999 },
});
export const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
export const MYSQL_ADMIN_URL = process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/';

/** Service settings stripped from the inherited environment, so the service runs on its defaults. */
export const SERVICE_SETTINGS = [
  'SECRET_TOKEN', 'DB_URL', 'PORT', 'HOST', 'AUTH_USERNAME', 'AUTH_PASSWORD', 'LOG_LEVEL',
  'LOGIN_RATE_LIMIT', 'DB_CONNECT_TIMEOUT', 'DB_QUERY_TIMEOUT', 'REQUEST_TIMEOUT', 'DB_POOL_MAX',
  'CORS_ORIGINS', 'METRICS', 'WORKERS', 'NODE_OPTIONS',
  // The switches of the speed paths and of the protocol parts (and their older names): a stray
  // shell variable would otherwise measure another service than the one the page names.
  'FAST_PATHS', 'NODE_HTTP_PARTS', 'HTTP_MACHINERY', 'HEAP_SIZING',
];

/** A setting the user got wrong: reported in one line, without a stack. */
export class UsageError extends Error {}

function intSetting(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer >= ${min}; got "${raw}"`);
  }
  return value;
}

/** BENCH_GO: unset = when it can be built, 0 = off, 1 = required. */
function goGinMode() {
  const raw = process.env.BENCH_GO ?? '';
  if (raw === '') return 'auto';
  if (raw === '0') return 'off';
  if (raw === '1') return 'required';
  throw new UsageError(`BENCH_GO must be 0 or 1; got "${raw}"`);
}

/** The run's settings, as the report records them; throws a UsageError on a bad value. */
export function readSettings() {
  return {
    rounds: intSetting('BENCH_ROUNDS', 3, 1),
    durationS: intSetting('BENCH_DURATION', 5, 1),
    warmupS: intSetting('BENCH_WARMUP', 2, 0),
    settleS: intSetting('BENCH_SETTLE', 5, 0),
    threads: THREADS,
    connections: CONNECTIONS,
    goGin: goGinMode(),
    modes: wantedModes(intSetting('BENCH_WORKERS', os.availableParallelism?.() ?? os.cpus().length, 1)),
  };
}

/** The CPU the servers are pinned to in the per-core half, and the one wrk is pinned to. */
export const SERVER_CPU = '1';
export const LOAD_CPU = '0';

/**
 * BENCH_MODES: the halves of a run. Each: { id, label, workers (the service's WORKERS; undefined =
 * its default 1), serverCpu and loadCpu (taskset CPU lists; undefined = not pinned) }.
 */
function wantedModes(machineWorkers) {
  const all = {
    core: {
      id: 'core',
      label: 'Per core (each server pinned to CPU 1, wrk to CPU 0, WORKERS=1)',
      workers: undefined,
      serverCpu: SERVER_CPU,
      loadCpu: LOAD_CPU,
    },
    machine: {
      id: 'machine',
      label: `Whole machine (nothing pinned, the service with WORKERS=${machineWorkers})`,
      workers: machineWorkers,
      serverCpu: undefined,
      loadCpu: undefined,
    },
  };
  const raw = (process.env.BENCH_MODES || 'core,machine').split(',').map((s) => s.trim()).filter(Boolean);
  return raw.map((id) => {
    if (!all[id]) throw new UsageError(`BENCH_MODES must list core and/or machine; got "${id}"`);
    return all[id];
  });
}

/** BENCH_STORES: the kinds of store to run. */
export function wantedStores() {
  return (process.env.BENCH_STORES || 'sqlite,postgres,mysql').split(',').map((s) => s.trim());
}

/** BENCH_TOOL: the load generator asked for. */
export function wantedTool() {
  return (process.env.BENCH_TOOL || 'wrk').toLowerCase();
}

/** BENCH_KEEP_LOGS=1: keep the service logs whole. */
export function keepFullLogs() {
  return process.env.BENCH_KEEP_LOGS === '1';
}

/** GIN_LOGGER=1: the Go/Gin reference logs every request. */
export function ginRequestLog() {
  return process.env.GIN_LOGGER === '1';
}
