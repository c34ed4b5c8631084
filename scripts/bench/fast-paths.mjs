// "What each speed path buys" (BENCH_FAST_PATHS), run within the per-core half: next to the
// service with every speed path on (the default, FAST_PATHS=on: the half's own service), the same
// built service on the same store
//   - with FAST_PATHS=off (the plain service), running every scenario of the half, and
//   - for each path, with FAST_PATHS=-<path> (all but that one: leave-one-out), running the
//     scenarios where that path acts (WHERE below),
// each pinned like the half's servers, started before its rounds and run in the same rounds,
// each run right after the all-on service's run of the same scenario (scenarios.mjs): both
// sides of every ratio see the same machine, median of the rounds. After the rounds, with
// nothing else running: startup to the first answer and RSS after start, STARTUP_SAMPLES
// restarts of each, alternating (all on, plain, without precompiled-schemas, without
// lazy-api-reference). heap-sizing's gain is peak RSS: the service without it runs every scenario
// of the half, as the all-on one does. A path's lines: the non-blank, non-comment lines of its
// files in src/fast/ (src/fast/<path>.ts or the folder src/fast/<path>/) at the time of the run.
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { stopChild } from './children.mjs';
import { log } from './log.mjs';
import { readPeakRss, readRss } from './peak-rss.mjs';
import { startService } from './processes.mjs';
import { LOG_DIR, PLAIN, ROOT, STARTUP_SAMPLES, UsageError, fastPathNames } from './settings.mjs';
import { median, round1, summarise } from './stats.mjs';

/** What each path stands in for: the plain part it replaces, in one short phrase. */
export const STANDS_IN_FOR = {
  'answer-in-turns': "each request run through Fastify's handler as its socket is read",
  'shared-lists': 'each GET /books reading and serializing its own list',
  'bulk-lists': 'pages of 1,000 books, their JSON built from row objects (MySQL) or by PostgreSQL',
  'batched-queries': 'one query per request',
  'group-commit': 'one SQLite transaction (and fsync) per write',
  'counted-metrics': "prom-client's inc()/observe() per request",
  'one-read-body': "Fastify's body parser reading the body as a stream",
  'batched-log': "pino's own destination, a write per log line",
  'token-cache': "verifying the token's signature on every request",
  'precompiled-schemas': "compiling the routes' schemas at every start",
  'lazy-api-reference': 'the OpenAPI document and /docs built at start',
  'heap-sizing': "V8's default heap sizing",
};

const FIRST = 'the first store of the run';
/**
 * Where each path acts and is measured: `measure` (req/s on `scenarios`, startup, or peak RSS
 * over every scenario), `acts` (the stores where it does anything; default every store) and
 * `preferred` (where it is measured unless BENCH_FAST_PATHS_STORES=all: the paths that do not
 * depend on the store on the run's first store, the others on SQLite and PostgreSQL).
 */
const WHERE = {
  'answer-in-turns': { measure: 'rps', scenarios: ['get-book', 'create-book'], preferred: ['sqlite', 'postgres'] },
  'shared-lists': { measure: 'rps', scenarios: ['list-books'], preferred: ['sqlite', 'postgres'] },
  // Acts only past a list's first 1,000 books: measured by the library-scale phase instead.
  'bulk-lists': { measure: 'full-list', acts: ['postgres', 'mysql'] },
  // SQLite has no batched reads of its own (its queries run synchronously, one after another).
  'batched-queries': { measure: 'rps', scenarios: ['get-book', 'create-book'], acts: ['postgres', 'mysql'], preferred: ['postgres'] },
  'group-commit': { measure: 'rps', scenarios: ['create-book'], acts: ['sqlite'], preferred: ['sqlite'] },
  'counted-metrics': { measure: 'rps', scenarios: ['login', 'create-book'], preferred: FIRST },
  'one-read-body': { measure: 'rps', scenarios: ['login', 'create-book'], preferred: FIRST },
  'batched-log': { measure: 'rps', scenarios: ['login', 'create-book'], preferred: FIRST },
  'token-cache': { measure: 'rps', scenarios: ['get-book'], preferred: FIRST },
  'precompiled-schemas': { measure: 'startup', preferred: FIRST },
  'lazy-api-reference': { measure: 'startup', preferred: FIRST },
  'heap-sizing': { measure: 'peak-rss', preferred: FIRST },
};
const EVERY_STORE = ['sqlite', 'postgres', 'mysql'];
const STORE_LABELS = { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB' };

/** The stores (kinds) of the run where `where` measures a path: [] when it acts on none of them. */
function placed(where, kinds, storesSetting) {
  const acting = (where.acts ?? EVERY_STORE).filter((kind) => kinds.includes(kind));
  if (storesSetting === 'all' || acting.length === 0) return acting;
  const preferred = where.preferred === FIRST ? [kinds[0]] : where.preferred;
  const chosen = acting.filter((kind) => preferred.includes(kind));
  return chosen.length ? chosen : acting.slice(0, 1);
}

/**
 * The phase's plan for this run: the services that run beside the half's (`services`: one per
 * store and name, each { store, name, fastPaths, scenarios ('all' or ids) }), the startups to
 * time per store (`startups`), and per path where it is measured or why it is not (`paths`).
 * `skipped` says why the phase does not run at all.
 */
export function planFastPaths(selection, stores, modes) {
  const names = fastPathNames();
  const skipped = selection.off ?? (modes.some((mode) => mode.id === 'core') ? null : 'BENCH_MODES has no core half (the phase runs within it)');
  const plan = { selection, skipped, services: [], startups: [], paths: [], seconds: { starts: 0, startups: 0 }, started: 0, logFiles: new Set() };
  const kinds = stores.map((store) => store.kind);
  const service = (store, name, fastPaths, scenarios) => plan.services.push({ store, name, fastPaths, scenarios });
  const startup = (store, name, fastPaths) => {
    let entry = plan.startups.find((each) => each.store === store);
    if (!entry) plan.startups.push((entry = { store, configs: [{ name: 'on', fastPaths: 'on' }] }));
    entry.configs.push({ name, fastPaths });
  };
  for (const name of names) {
    const where = WHERE[name];
    const row = { name, standsInFor: STANDS_IN_FOR[name] ?? '?', measure: where?.measure ?? null, scenarios: where?.scenarios ?? null, stores: [] };
    plan.paths.push(row);
    if (skipped) row.notMeasured = skipped;
    else if (!selection.paths.includes(name)) row.notMeasured = 'left out of this run (BENCH_FAST_PATHS)';
    else if (!where) row.notMeasured = 'the bench does not know where it acts (WHERE in scripts/bench/fast-paths.mjs)';
    else if (where.measure === 'full-list') {
      row.notMeasured = 'acts past a list\'s first 1,000 books: measured in "Library scale", GET /books without parameters, its row "without bulk-lists"';
    } else {
      row.stores = placed(where, kinds, selection.stores);
      if (row.stores.length === 0) {
        row.notMeasured = `acts on ${(where.acts ?? EVERY_STORE).map((kind) => STORE_LABELS[kind]).join(' and ')} only, not in this run`;
      }
      for (const store of stores.filter((each) => row.stores.includes(each.kind))) {
        if (where.measure === 'rps') service(store, name, `-${name}`, where.scenarios);
        else if (where.measure === 'peak-rss') service(store, name, `-${name}`, 'all');
        else startup(store, name, `-${name}`);
      }
    }
  }
  if (!skipped && selection.plain) {
    for (const store of stores) {
      service(store, PLAIN, 'off', 'all');
      startup(store, PLAIN, 'off');
    }
  }
  // Per store: all on first (startups), then the plain service, then the paths in their order.
  const rank = (name) => (name === 'on' ? 0 : name === PLAIN ? 1 : 2);
  plan.services.sort((a, b) => stores.indexOf(a.store) - stores.indexOf(b.store) || rank(a.name) - rank(b.name));
  for (const entry of plan.startups) entry.configs.sort((a, b) => rank(a.name) - rank(b.name));
  return plan;
}

/** Connections one process may hold: the service's default pool (DB_POOL_MAX), Go/Gin's, the floor's. */
const POOL = 10;

/**
 * The phase's services hold connections beside the half's (each a pool of POOL while it is busy
 * and for 30 s after): fails before the run when a database server cannot allow them all, and
 * warns when it cannot now, with the connections others hold. `goGinBuilt`: Go/Gin runs too.
 */
export async function checkConnections(plan, stores, goGinBuilt) {
  for (const store of stores.filter((each) => each.connections)) {
    const services = plan.services.filter((service) => service.store === store).length;
    if (services === 0) continue;
    // The half's service, the phase's, Go/Gin, and (PostgreSQL, per core) the node:http + pg floor.
    const processes = 1 + services + (goGinBuilt ? 1 : 0) + (store.kind === 'postgres' ? 1 : 0);
    const need = processes * POOL + 1;
    const { max, open } = await store.connections();
    const what =
      `the per-core half may hold ${need} connections to ${store.label} ` +
      `(${processes} processes × a pool of ${POOL}, ${services} of them for what each speed path buys)`;
    if (need > max) {
      throw new UsageError(
        `${what}, more than the ${max} it allows: narrow BENCH_FAST_PATHS, use BENCH_FAST_PATHS_STORES=some, or raise its max_connections`,
      );
    }
    if (need > max - open) log(`bench: warning: ${what}, and ${open} of the ${max} it allows are open now`);
  }
}

/** What a service of the phase is started as: the store's settings, its own label and log file. */
function target(store, name, fastPaths) {
  return {
    kind: store.kind,
    label: `${store.label}, FAST_PATHS=${fastPaths}`,
    logFile: join(LOG_DIR, `service-${store.kind}-${name === PLAIN ? 'plain' : `without-${name}`}.log`),
    secret: store.secret,
    url: store.url,
  };
}

/** Empties a log file of the phase the first time this run writes to it. */
function freshLog(plan, file) {
  if (plan.logFiles.has(file)) return;
  writeFileSync(file, '');
  plan.logFiles.add(file);
}

/** Starts the phase's services beside the half's (pinned to `cpu`); each gets child, port, label, logFile. */
export async function startFastPathServices(plan, workDir, cpu) {
  for (const service of plan.services) {
    Object.assign(service, target(service.store, service.name, service.fastPaths));
    freshLog(plan, service.logFile);
    const t0 = performance.now();
    const { child, port } = await startService(service, workDir, undefined, cpu, service.fastPaths);
    plan.seconds.starts += (performance.now() - t0) / 1000;
    plan.started += 1;
    Object.assign(service, { child, port });
    log(`bench: ${service.label}: pid ${child.pid} on port ${port} (what each speed path buys)`);
  }
}

/** After the rounds: each service's peak RSS, then stopped. */
export async function stopFastPathServices(plan) {
  for (const service of plan.services) {
    if (!service.child) continue;
    service.peak = readPeakRss(service.child.pid);
    await stopChild(service.child);
  }
}

/**
 * With nothing else running, pinned to `cpu`: per store, STARTUP_SAMPLES restarts of each of
 * its startups, taken in turn (all on, then each other); each timed to its first 200, and its
 * RSS (VmRSS) read right then. Sets `entry.results` = { [name]: { samplesMs, rssMiB } }.
 */
export async function measureFastPathStartups(plan, workDir, cpu) {
  const t0 = performance.now();
  for (const entry of plan.startups) {
    log(`bench: ${entry.store.label}: startup, ${STARTUP_SAMPLES} restarts each of FAST_PATHS=${entry.configs.map((config) => config.fastPaths).join(', ')}…`);
    entry.results = Object.fromEntries(entry.configs.map((config) => [config.name, { fastPaths: config.fastPaths, samplesMs: [], rssMiB: [] }]));
    for (let i = 0; i < STARTUP_SAMPLES; i += 1) {
      for (const config of entry.configs) {
        const store = config.name === 'on' ? entry.store : target(entry.store, config.name, config.fastPaths);
        if (config.name !== 'on') freshLog(plan, store.logFile);
        const { child, startupMs } = await startService(store, workDir, undefined, cpu, config.fastPaths);
        const rss = readRss(child.pid);
        await stopChild(child);
        plan.started += 1;
        entry.results[config.name].samplesMs.push(startupMs);
        entry.results[config.name].rssMiB.push(rss);
      }
    }
  }
  plan.seconds.startups = (performance.now() - t0) / 1000;
}

/** The non-blank, non-comment lines of a source text (`//` lines and `/* … *\/` blocks are comments). */
export function codeLines(text) {
  let inBlock = false;
  let count = 0;
  for (const line of text.split('\n')) {
    let rest = line.trim();
    let code = false;
    while (rest) {
      if (inBlock) {
        const end = rest.indexOf('*/');
        if (end < 0) break;
        rest = rest.slice(end + 2).trim();
        inBlock = false;
      } else if (rest.startsWith('//')) {
        break;
      } else if (rest.startsWith('/*')) {
        inBlock = true;
        rest = rest.slice(2);
      } else {
        code = true;
        break;
      }
    }
    if (code) count += 1;
  }
  return count;
}

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

function sourceFiles(path) {
  if (!statSync(path).isDirectory()) return SOURCE.test(path) ? [path] : [];
  return readdirSync(path)
    .sort()
    .flatMap((name) => sourceFiles(join(path, name)));
}

/** A path's files in src/fast/ (its file, or its folder) and their lines of code; lines null when none exists. */
export function pathLines(name) {
  const files = [join(ROOT, 'src', 'fast', `${name}.ts`), join(ROOT, 'src', 'fast', name)].filter((path) => existsSync(path)).flatMap(sourceFiles);
  return {
    files: files.map((file) => relative(ROOT, file)),
    lines: files.length ? files.reduce((sum, file) => sum + codeLines(readFileSync(file, 'utf8')), 0) : null,
  };
}

const pick = (summary) => summary && { rps: summary.rps, p50Ms: summary.p50Ms, p99Ms: summary.p99Ms, errors: summary.errors };
const ratio = (a, b) => (a != null && b ? a / b : null);

/**
 * The phase's part of the report (bench-results/latest.json, key fastPaths), from the plan after
 * the run and the per-core half's report (`core`: its results and peak RSS).
 */
export function fastPathsReport(plan, core, settings) {
  const lines = Object.fromEntries(plan.paths.map((path) => [path.name, pathLines(path.name)]));
  const base = {
    selection: plan.selection.off ? { off: true } : plan.selection,
    ...(plan.skipped ? { skipped: plan.skipped } : {}),
  };
  if (plan.skipped || !core) {
    return { ...base, paths: plan.paths.map((path) => ({ ...path, ...lines[path.name] })) };
  }
  const onResult = (store, id) => core.results.find((r) => r.store === store.kind && r.id === id);
  const ownScenarios = (service) => plan.scenarios.filter((scenario) => scenario.variant === service);
  const startupOf = (store, name) => {
    const results = plan.startups.find((entry) => entry.store === store)?.results?.[name];
    return results && { medianMs: median(results.samplesMs), samplesMs: results.samplesMs, rssAfterStartMiB: round1(median(results.rssMiB)), rssSamplesMiB: results.rssMiB.map(round1) };
  };
  const onPeak = (store) => core.peakRss[store.kind]?.service?.peakRssMiB ?? null;
  const variantRuns = (service) =>
    ownScenarios(service).map((scenario) => {
      const summary = summarise(scenario.rounds, scenario.warmups);
      const on = onResult(service.store, scenario.id);
      return { id: scenario.id, scenario: scenario.name, on: pick(on), without: summary, ratio: ratio(on?.rps, summary.rps), onResult: on };
    });

  const plain = {};
  for (const service of plan.services.filter((each) => each.name === PLAIN)) {
    const peak = round1(service.peak?.peakRssMiB);
    plain[service.store.kind] = {
      fastPaths: 'off',
      log: service.logSummary,
      scenarios: variantRuns(service).map(({ id, scenario, on, without, onResult: result }) => ({
        id,
        scenario,
        on,
        plain: without,
        plainToOn: ratio(without.rps, on?.rps),
        goGinRps: result?.goGin?.rps ?? null,
        plainToGoGin: ratio(without.rps, result?.goGin?.rps),
        onToGoGin: result?.ratioToGoGin ?? null,
      })),
      peakRss: { onMiB: onPeak(service.store), plainMiB: peak, differenceMiB: diff(peak, onPeak(service.store)) },
      startup: { on: startupOf(service.store, 'on'), plain: startupOf(service.store, PLAIN) },
    };
  }

  const paths = plan.paths.map((path) => {
    const row = { ...path, ...lines[path.name] };
    if (row.notMeasured) return row;
    row.measurements = path.stores.flatMap((kind) => {
      const service = plan.services.find((each) => each.name === path.name && each.store.kind === kind);
      const store = service?.store ?? plan.startups.find((entry) => entry.store.kind === kind)?.store;
      if (path.measure === 'rps') {
        return variantRuns(service).map(({ id, scenario, on, without, ratio: gain }) => ({ store: kind, id, scenario, on, without, gain }));
      }
      if (path.measure === 'peak-rss') {
        const withoutMiB = round1(service.peak?.peakRssMiB);
        return [{
          store: kind,
          onPeakRssMiB: onPeak(store),
          withoutPeakRssMiB: withoutMiB,
          differenceMiB: diff(onPeak(store), withoutMiB),
          // The same scenarios ran without it: their req/s too, for what it is worth.
          runs: variantRuns(service).map(({ id, scenario, on, without, ratio: gain }) => ({ id, scenario, on, without, gain })),
        }];
      }
      const on = startupOf(store, 'on');
      const without = startupOf(store, path.name);
      return [{
        store: kind,
        on,
        without,
        differenceMs: diff(on?.medianMs, without?.medianMs),
        rssDifferenceMiB: diff(on?.rssAfterStartMiB, without?.rssAfterStartMiB),
      }];
    });
    row.log = plan.services.filter((each) => each.name === path.name).map((each) => ({ store: each.store.kind, ...each.logSummary }));
    return row;
  });

  const roundsS = plan.scenarios.filter((scenario) => scenario.variant).reduce((sum, scenario) => sum + scenario.elapsedMs / 1000, 0);
  return {
    ...base,
    how: {
      within: 'the per-core half',
      rounds: settings.rounds,
      durationS: settings.durationS,
      warmupS: settings.warmupS,
      settleS: settings.settleS,
      startupSamples: STARTUP_SAMPLES,
    },
    seconds: {
      starts: Math.round(plan.seconds.starts),
      rounds: Math.round(roundsS),
      startups: Math.round(plan.seconds.startups),
      total: Math.round(plan.seconds.starts + roundsS + plan.seconds.startups),
    },
    servicesStarted: plan.started,
    plain,
    paths,
  };
}

function diff(a, b) {
  return a == null || b == null ? null : Math.round((a - b) * 10) / 10;
}
