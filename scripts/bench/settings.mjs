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
//   BENCH_FAST_PATHS    "what each speed path buys", run within the per-core half (so only when
//                       BENCH_MODES has core): next to the service (every speed path on), the
//                       same service with FAST_PATHS=off on every scenario and store, and with
//                       FAST_PATHS=-<path> (all but that one) where that path acts
//                       (scripts/bench/fast-paths.mjs). Default on (every path and the plain
//                       service); 0 = off; a comma list of path names (src/seams.ts) and/or
//                       `plain` (the FAST_PATHS=off service) = only those; a comma list of
//                       -names = all but those (e.g. -heap-sizing,-plain)
//   BENCH_FAST_PATHS_STORES  some (default): each path that does not depend on the store on the
//                       run's first store only, the others on SQLite and PostgreSQL (batched-
//                       queries on PostgreSQL), to keep the phase short; all = each on every
//                       store of the run where it acts
//   BENCH_LIBRARY_SIZES library scale (scripts/bench/library-scale.mjs): GET /books with limit,
//                       sort, q and cursor on a fresh store of each kind grown by bulk SQL to each
//                       of these sizes in turn, and GET /books without parameters at the largest
//                       one against Go/Gin. Default 10000,100000,1000000 (sizes ascending, each
//                       at least 1000); 0 = skip the phase
//   BENCH_LIBRARY_ROUNDS  rounds at each size of that phase (default 1; each run after the warm-up)
//   BENCH_TOOL          wrk (default) or autocannon (fallback, used when wrk is missing)
//   BENCH_GO            Go/Gin reference: unset = when it can be built, 0 = off,
//                       1 = required (a failure to build or start it is fatal)
//   GIN_LOGGER          1 = the Go/Gin reference logs every request (gin's logger) to its log file
//   BENCH_KEEP_LOGS     1 = keep the full service logs (default: only lines that are not 2xx
//                       "request completed" at info level are kept)
//   TEST_POSTGRES_URL   PostgreSQL server for the fresh database
//                       (default postgres://postgres@127.0.0.1:5432/postgres)
//   TEST_MYSQL_URL      MariaDB/MySQL server for the fresh database (default mysql://root@127.0.0.1:3306/)
import { readFileSync } from 'node:fs';
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
/** Library scale: clients of its load runs, the page asked for, the page of the walk to the deep cursor… */
export const LIBRARY_CONNECTIONS = 16;
/** wrk's timeout for the pages: its default 2 s dropped (not timed) MariaDB's searches at 1,000,000 books. */
export const LIBRARY_TIMEOUT_S = 30;
export const LIBRARY_PAGE = 50;
export const LIBRARY_WALK_PAGE = 1000;
/** …which starts after this share of the collection… */
export const LIBRARY_DEEP_SHARE = 0.9;
/**
 * …and GET /books without parameters at its largest size: requests one at a time, then clients
 * under load, wrk's timeout and the least seconds of a load run. An answer of a million books
 * takes seconds: with 16 clients on one core, Go/Gin finished none within 15 s.
 */
export const LIBRARY_LIST_SAMPLES = 5;
export const LIBRARY_LIST_CONNECTIONS = 4;
export const LIBRARY_LIST_TIMEOUT_S = 120;
export const LIBRARY_LIST_MIN_DURATION_S = 30;
const LIBRARY_SIZES = [10_000, 100_000, 1_000_000];
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
    fastPaths: fastPathSelection(),
    library: librarySelection(),
  };
}

/** BENCH_LIBRARY_SIZES and BENCH_LIBRARY_ROUNDS: { sizes, rounds }, or { off: why }. */
function librarySelection() {
  const raw = (process.env.BENCH_LIBRARY_SIZES ?? '').trim();
  if (raw === '0') return { off: 'BENCH_LIBRARY_SIZES=0' };
  const sizes = raw === '' ? LIBRARY_SIZES : raw.split(',').map((entry) => Number(entry.trim()));
  const ascending = sizes.every((size, i) => Number.isInteger(size) && size >= 1000 && (i === 0 || size > sizes[i - 1]));
  if (!ascending) throw new UsageError(`BENCH_LIBRARY_SIZES must be 0 or ascending integers >= 1000, e.g. 10000,100000; got "${raw}"`);
  return { sizes, rounds: intSetting('BENCH_LIBRARY_ROUNDS', 1, 1) };
}

/** The speed paths' names, as src/seams.ts lists them (FAST_PATH_NAMES), in its order. */
export function fastPathNames() {
  const source = readFileSync(join(ROOT, 'src', 'seams.ts'), 'utf8');
  const list = /FAST_PATH_NAMES\s*=\s*\[([^\]]*)\]/.exec(source)?.[1] ?? '';
  const names = [...list.matchAll(/'([a-z0-9-]+)'/g)].map((match) => match[1]);
  if (names.length === 0) throw new Error('cannot read FAST_PATH_NAMES from src/seams.ts');
  return names;
}

/** The FAST_PATHS=off service, by its name in BENCH_FAST_PATHS. */
export const PLAIN = 'plain';

/**
 * BENCH_FAST_PATHS and BENCH_FAST_PATHS_STORES: { plain (whether the FAST_PATHS=off service
 * runs), paths (the paths measured one by one), stores ('some' or 'all') }, or { off: why }.
 */
function fastPathSelection() {
  const raw = (process.env.BENCH_FAST_PATHS ?? '').trim().toLowerCase();
  if (raw === '0' || raw === 'off') return { off: 'BENCH_FAST_PATHS=0' };
  const storesRaw = (process.env.BENCH_FAST_PATHS_STORES || 'some').trim().toLowerCase();
  if (storesRaw !== 'some' && storesRaw !== 'all') {
    throw new UsageError(`BENCH_FAST_PATHS_STORES must be some or all; got "${process.env.BENCH_FAST_PATHS_STORES}"`);
  }
  const names = fastPathNames();
  if (raw === '' || raw === '1' || raw === 'on') return { plain: true, paths: names, stores: storesRaw };
  const entries = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
  const named = entries.map((entry) => entry.replace(/^-/, ''));
  const removing = entries.filter((entry) => entry.startsWith('-')).length;
  const unknown = named.filter((name) => name !== PLAIN && !names.includes(name));
  if (entries.length === 0 || unknown.length > 0 || (removing > 0 && removing < entries.length)) {
    throw new UsageError(
      `BENCH_FAST_PATHS must be 1, 0, a comma list of the ones to measure, or of -ones to leave out (${PLAIN}, ${names.join(', ')}); got "${process.env.BENCH_FAST_PATHS}"`,
    );
  }
  const chosen = (name) => (removing > 0 ? !named.includes(name) : named.includes(name));
  return { plain: chosen(PLAIN), paths: names.filter(chosen), stores: storesRaw };
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
