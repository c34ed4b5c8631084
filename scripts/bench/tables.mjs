// What the page and the console both show, from the report: the tables (each as
// [header, rows, right-aligned columns]; "what each speed path buys" too), the Go/Gin skips, and
// the notes (errors seen, what the logs said besides 2xx request lines).
import { fmtErrors, fmtMiB, fmtMs, fmtRatio, fmtRps, storeLabel } from './format.mjs';
import { libraryNotes } from './library-tables.mjs';
import { LARGE_BOOKS, STARTUP_SAMPLES } from './settings.mjs';

const RESULT_HEADER = [
  'scenario', 'store', 'req/s', 'p50', 'p99', 'max', 'errors',
  'Go/Gin req/s', 'Go/Gin p50', 'Go/Gin p99', 'Go/Gin max', 'Go/Gin errors', 'vs Go/Gin', 'p99 / Go/Gin p99',
];
const RESULT_RIGHT = new Set([2, 3, 4, 5, 7, 8, 9, 10, 12, 13]);
const LARGE_HEADER = [
  'store', 'req/s', 'p50', 'p99', 'errors', 'one at a time (median of 20)', 'response', 'peak RSS',
  'Go/Gin req/s', 'Go/Gin p99', 'Go/Gin errors', 'Go/Gin one at a time', 'Go/Gin response', 'Go/Gin peak RSS',
  'vs Go/Gin', 'peak RSS / Go/Gin',
];
const RSS_HEADER = ['server', 'store', 'processes', 'peak RSS, all processes', 'peak RSS, largest process', 'peak RSS / Go/Gin'];
const STARTUP_HEADER = [
  'store', `startup (median of ${STARTUP_SAMPLES})`, 'first start (empty store, migrations)', 'samples (ms)',
  `Go/Gin startup (median of ${STARTUP_SAMPLES})`, 'Go/Gin samples (ms)', 'startup / Go/Gin',
];

/** One half of the run: the service (and the baseline) per scenario and store, Go/Gin beside it. */
export function resultTable(mode) {
  return [RESULT_HEADER, mode.results.map(resultRow), RESULT_RIGHT];
}

function resultRow(r) {
  const go = r.goGin;
  return [
    r.scenario,
    storeLabel(r.store),
    fmtRps(r.rps),
    fmtMs(r.p50Ms),
    fmtMs(r.p99Ms),
    fmtMs(r.maxMs),
    fmtErrors(r),
    go ? fmtRps(go.rps) : '–',
    go ? fmtMs(go.p50Ms) : '–',
    go ? fmtMs(go.p99Ms) : '–',
    go ? fmtMs(go.maxMs) : '–',
    go ? fmtErrors(go) : '–',
    r.store === 'node:http' ? `${fmtRatio(r.ratioToBaseline)} of itself` : fmtRatio(r.ratioToGoGin),
    fmtRatio(r.p99ToGoGin),
  ];
}

/** One half of the run: the peak RSS of every server. */
export function rssTable(mode) {
  const rows = [];
  const row = (server, store, peak, ratio = '') =>
    peak && rows.push([server, store, String(peak.processes), fmtMiB(peak.peakRssMiB), fmtMiB(peak.largestProcessMiB), ratio]);
  row('node:http baseline', '—', mode.peakRss.baseline);
  for (const [kind, p] of Object.entries(mode.peakRss)) {
    if (kind === 'baseline') continue;
    // All processes of each: with WORKERS=N the service's primary and workers, against Go's one.
    row('service', storeLabel(kind), p.service, p.goGin?.peakRssMiB ? fmtRatio(p.service.peakRssMiB / p.goGin.peakRssMiB) : '–');
    row('Go/Gin', storeLabel(kind), p.goGin);
  }
  return [RSS_HEADER, rows, new Set([2, 3, 4, 5])];
}

/** The per-store tables: GET /books at LARGE_BOOKS (large), memory (rss) and startup. */
export function storeTables(report, stores) {
  const rows = extraRows(report, stores);
  return {
    large: [LARGE_HEADER, rows.map((r) => r.large), new Set([1, 2, 3, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15])],
    startup: [STARTUP_HEADER, rows.map((r) => r.startup), new Set([1, 2, 4, 6])],
  };
}

/** Per store: its rows of the memory, large-list and startup tables. */
function extraRows(report, stores) {
  return stores.map((store) => {
    const large = report.largeList[store.kind];
    const startup = report.startup[store.kind];
    const go = large.goGin;
    const kib = (bytes) => `${(bytes / 1024).toFixed(0)} KiB`;
    return {
      large: [
        store.label,
        fmtRps(large.rps),
        fmtMs(large.p50Ms),
        fmtMs(large.p99Ms),
        fmtErrors(large),
        fmtMs(large.sequential.medianMs),
        kib(large.responseBytes),
        fmtMiB(large.peakRssMiB),
        go ? fmtRps(go.rps) : '–',
        go ? fmtMs(go.p99Ms) : '–',
        go ? fmtErrors(go) : '–',
        go ? fmtMs(go.sequential.medianMs) : '–',
        go ? kib(go.responseBytes) : '–',
        go ? fmtMiB(go.peakRssMiB) : '–',
        fmtRatio(large.ratioToGoGin),
        fmtRatio(large.peakRssToGoGin),
      ],
      startup: [
        store.label,
        fmtMs(startup.medianMs),
        fmtMs(startup.firstStartMs),
        startup.samplesMs.map((ms) => Math.round(ms)).join(', '),
        fmtMs(startup.goGin?.medianMs),
        startup.goGin ? startup.goGin.samplesMs.map((ms) => Math.round(ms)).join(', ') : '–',
        fmtRatio(startup.ratioToGoGin),
      ],
    };
  });
}

export function goGinSkips(report) {
  const skips = [];
  if (report.goGin.skipped) skips.push(`Go/Gin reference skipped: ${report.goGin.skipped}`);
  for (const [kind, s] of Object.entries(report.goGin.stores ?? {})) {
    if (s.skipped) skips.push(`Go/Gin reference on ${storeLabel(kind)} skipped: ${s.skipped}`);
  }
  return skips;
}

/** What the service logged besides 2xx request lines, and every error wrk saw. */
export function serviceNotes(report) {
  const notes = [];
  for (const mode of report.modes) {
    for (const result of mode.results) {
      if (result.keysHonoured === false) {
        notes.push(
          `[${mode.id}] ${result.scenario} [${storeLabel(result.store)}]: the service did not replay a repeated ` +
            'Idempotency-Key (it does not implement keys), so this row measured a plain POST /book carrying the header',
        );
      }
      if (result.errors || result.warmupErrors) {
        notes.push(
          `[${mode.id}] ${result.scenario} [${storeLabel(result.store)}]: ${fmtErrors(result)} in measured runs, ` +
            `${result.warmupErrors} error(s) in warm-ups`,
        );
      }
      if (result.goGin && (result.goGin.errors || result.goGin.warmupErrors)) {
        notes.push(
          `[${mode.id}] ${result.scenario} [Go/Gin, ${storeLabel(result.store)}]: ${fmtErrors(result.goGin)} in measured runs, ` +
            `${result.goGin.warmupErrors} error(s) in warm-ups`,
        );
      }
    }
  }
  for (const [kind, large] of Object.entries(report.largeList)) {
    if (large.errors || large.warmupErrors) {
      notes.push(`GET /books at ${LARGE_BOOKS} [${storeLabel(kind)}]: ${fmtErrors(large)}, ${large.warmupErrors} in warm-ups`);
    }
    const go = large.goGin;
    if (go && (go.errors || go.warmupErrors)) {
      notes.push(`GET /books at ${LARGE_BOOKS} [Go/Gin, ${storeLabel(kind)}]: ${fmtErrors(go)}, ${go.warmupErrors} in warm-ups`);
    }
  }
  for (const [kind, summary] of Object.entries(report.serviceLog)) {
    for (const entry of summary.notable) {
      notes.push(`${storeLabel(kind)} service log: ${entry.count} × ${entry.message}`);
    }
  }
  notes.push(...fastPathNotes(report.fastPaths, report.serviceLog));
  // The library-scale services' start-up warnings are the stores' own services' too: noted once.
  const ownWarnings = new Set(Object.values(report.serviceLog).flatMap((summary) => summary.notable.map((entry) => entry.message)));
  notes.push(...libraryNotes(report.libraryScale, ownWarnings));
  for (const [kind, s] of Object.entries(report.goGin.stores ?? {})) {
    if (s.log?.cutOff) {
      notes.push(`Go/Gin (${storeLabel(kind)}): ${s.log.cutOff} answer(s) cut off by wrk closing its connections at the end of a run (gin's broken-pipe report)`);
    }
    if (s.log?.notable) {
      notes.push(`Go/Gin (${storeLabel(kind)}) log: ${s.log.notable} line(s) besides its start, e.g. ${s.log.examples[0]}`);
    }
  }
  return notes;
}

/** The targets of issue 13, per store: the least ratio to the tuned Go/Gin reference. */
const TARGETS = {
  core: {
    'get-book': { sqlite: 1.2, postgres: 1.1 },
    'list-books': { sqlite: 2.0, postgres: 1.2 },
    'create-book': { sqlite: 1.5, postgres: 1.0 },
    login: { sqlite: 0.6, postgres: 0.6 },
  },
  machine: {
    'get-book': { sqlite: 1.0, postgres: 1.0 },
    'list-books': { sqlite: 1.0, postgres: 1.0 },
    'create-book': { sqlite: 1.0, postgres: 1.0 },
    login: { sqlite: 1.0, postgres: 1.0 },
  },
};
const READS = new Set(['get-book', 'list-books']);
const MAX_P99_TO_GO = 2;
const MAX_RSS_MIB = 150;

/** Each target with what this run measured: [target, measured, met]. */
export function targetTable(report) {
  const rows = [];
  for (const mode of report.modes) {
    for (const r of mode.results) {
      const least = TARGETS[mode.id]?.[r.id]?.[r.store];
      if (least === undefined || r.ratioToGoGin == null) continue;
      rows.push([`${mode.id === 'core' ? 'per core' : 'whole machine'}: ${r.scenario} [${storeLabel(r.store)}] req/s vs Go/Gin`, `≥ ${least.toFixed(1)}×`, fmtRatio(r.ratioToGoGin), r.ratioToGoGin >= least ? 'yes' : 'no']);
      if (mode.id === 'core' && READS.has(r.id) && r.p99ToGoGin != null) {
        rows.push([`per core: ${r.scenario} [${storeLabel(r.store)}] p99 vs Go/Gin p99`, `≤ ${MAX_P99_TO_GO}×`, `${fmtRatio(r.p99ToGoGin)} (${fmtMs(r.p99Ms)} / ${fmtMs(r.goGin.p99Ms)})`, r.p99ToGoGin <= MAX_P99_TO_GO ? 'yes' : 'no']);
      }
    }
    const errors = mode.results.reduce((n, r) => n + r.errors + r.warmupErrors, 0);
    rows.push([`${mode.id === 'core' ? 'per core' : 'whole machine'}: errors (service, all scenarios, warm-ups too)`, '0', String(errors), errors === 0 ? 'yes' : 'no']);
    const largest = Math.max(...Object.entries(mode.peakRss).filter(([k]) => k !== 'baseline').map(([, p]) => p.service?.largestProcessMiB ?? 0));
    rows.push([`${mode.id === 'core' ? 'per core' : 'whole machine'}: peak RSS of the largest service process`, `< ${MAX_RSS_MIB} MiB`, fmtMiB(largest), largest < MAX_RSS_MIB ? 'yes' : 'no']);
  }
  return [['target', 'wanted', 'measured', 'met'], rows, new Set([1, 2])];
}

/** Scenarios by their short names, for the speed-path table. */
const SHORT = {
  'get-book': 'GET /book/:id',
  'list-books': 'GET /books',
  login: 'POST /token',
  'create-book': 'POST /book',
  'create-book-idempotent': 'POST /book with Idempotency-Key',
};

/** A difference with its sign: −12 ms, +3.1 MiB. */
function fmtDifference(value, unit) {
  if (value == null) return '–';
  const digits = unit === 'ms' ? 0 : 1;
  const text = Math.abs(value).toFixed(digits);
  return `${Number(text) === 0 ? '±' : value < 0 ? '−' : '+'}${text} ${unit}`;
}

const MEASURE_HEADER = ['path', 'stands in for', 'measured on', 'gain (req/s: all on ÷ without it; startup, memory: all on − without it)', 'lines'];
const PLAIN_HEADER = ['scenario', 'store', 'all on req/s', 'plain req/s', 'plain ÷ all on', 'all on p99', 'plain p99', 'plain vs Go/Gin', 'all on vs Go/Gin'];
const PLAIN_MEMORY_HEADER = [
  'store', 'startup, all on', 'startup, plain', 'plain − all on', 'RSS after start, all on', 'RSS after start, plain', 'plain − all on',
  'peak RSS, all on', 'peak RSS, plain', 'plain − all on',
];

function whereMeasured(path) {
  if (path.notMeasured) return '—';
  const stores = path.stores.map(storeLabel).join(', ');
  if (path.measure === 'startup') return `startup and RSS after start (median of ${STARTUP_SAMPLES} restarts), ${stores}`;
  if (path.measure === 'peak-rss') return `peak RSS over every scenario of the half, ${stores}`;
  return `${path.scenarios.map((id) => SHORT[id] ?? id).join(', ')}; ${stores}`;
}

function gain(path) {
  if (path.notMeasured) return `not measured: ${path.notMeasured}`;
  const m = path.measurements;
  let text;
  if (path.measure === 'startup') {
    text = m
      .map(
        (x) =>
          `startup ${fmtDifference(x.differenceMs, 'ms')} (${fmtMs(x.on?.medianMs)} vs ${fmtMs(x.without?.medianMs)}), ` +
          `RSS after start ${fmtDifference(x.rssDifferenceMiB, 'MiB')} (${fmtMiB(x.on?.rssAfterStartMiB)} vs ${fmtMiB(x.without?.rssAfterStartMiB)}) (${storeLabel(x.store)})`,
      )
      .join('; ');
  } else if (path.measure === 'peak-rss') {
    text = m
      .map((x) => `peak RSS ${fmtDifference(x.differenceMiB, 'MiB')} (${fmtMiB(x.onPeakRssMiB)} vs ${fmtMiB(x.withoutPeakRssMiB)}) (${storeLabel(x.store)})`)
      .join('; ');
  } else {
    const ids = [...new Set(m.map((x) => x.id))];
    text = ids
      .map((id) => `${SHORT[id] ?? id}: ${m.filter((x) => x.id === id).map((x) => `${fmtRatio(x.gain)} (${storeLabel(x.store)})`).join(', ')}`)
      .join('; ');
  }
  // A path whose code is not in src/fast/ yet: switching it changes nothing, the ratio is noise.
  return path.lines == null ? `${text} — no code in src/fast/ yet: both sides ran the same code` : text;
}

/**
 * "What each speed path buys": one row per path (`paths`), the plain service against all on per
 * scenario and store (`plain`), and its startup and memory (`plainMemory`); null when not measured.
 */
export function fastPathTables(report) {
  const fast = report.fastPaths;
  if (!fast) return null;
  const paths = [
    MEASURE_HEADER,
    fast.paths.map((path) => [path.name, path.standsInFor, whereMeasured(path), gain(path), path.lines == null ? '—' : String(path.lines)]),
    new Set([4]),
  ];
  const plainStores = Object.entries(fast.plain ?? {});
  if (plainStores.length === 0) return { paths, plain: null, plainMemory: null };
  const withGo = plainStores.some(([, p]) => p.scenarios.some((s) => s.goGinRps != null));
  const header = withGo ? PLAIN_HEADER : PLAIN_HEADER.slice(0, -2);
  const rows = plainStores.flatMap(([kind, p]) =>
    p.scenarios.map((s) => [
      // The keyed POST /book's name says what it is compared with; here that is the plain service.
      s.scenario.replace(/, vs Go\/Gin's plain POST \/book$/, ''),
      storeLabel(kind),
      fmtRps(s.on?.rps),
      fmtRps(s.plain.rps),
      fmtRatio(s.plainToOn),
      fmtMs(s.on?.p99Ms),
      fmtMs(s.plain.p99Ms),
      ...(withGo ? [fmtRatio(s.plainToGoGin), fmtRatio(s.onToGoGin)] : []),
    ]),
  );
  const memory = plainStores.map(([kind, p]) => {
    const on = p.startup.on;
    const plain = p.startup.plain;
    const minus = (a, b) => (a == null || b == null ? null : a - b);
    return [
      storeLabel(kind),
      fmtMs(on?.medianMs),
      fmtMs(plain?.medianMs),
      fmtDifference(minus(plain?.medianMs, on?.medianMs), 'ms'),
      fmtMiB(on?.rssAfterStartMiB),
      fmtMiB(plain?.rssAfterStartMiB),
      fmtDifference(minus(plain?.rssAfterStartMiB, on?.rssAfterStartMiB), 'MiB'),
      fmtMiB(p.peakRss.onMiB),
      fmtMiB(p.peakRss.plainMiB),
      fmtDifference(p.peakRss.differenceMiB, 'MiB'),
    ];
  });
  return {
    paths,
    plain: [header, rows, new Set([2, 3, 4, 5, 6, 7, 8])],
    plainMemory: [PLAIN_MEMORY_HEADER, memory, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9])],
  };
}

/** Errors the phase's services saw, and what their logs said besides 2xx request lines. */
function fastPathNotes(fast, serviceLog) {
  const notes = [];
  if (!fast || fast.skipped) return notes;
  const runs = [
    ...Object.entries(fast.plain ?? {}).flatMap(([kind, p]) => p.scenarios.map((s) => ({ what: `FAST_PATHS=off, ${storeLabel(kind)}`, scenario: s.scenario, result: s.plain }))),
    ...fast.paths.flatMap((path) =>
      (path.measurements ?? []).flatMap((x) =>
        (x.runs ?? [x]).filter((run) => run.without?.rps !== undefined).map((run) => ({ what: `FAST_PATHS=-${path.name}, ${storeLabel(x.store)}`, scenario: run.scenario, result: run.without })),
      ),
    ),
  ];
  for (const { what, scenario, result } of runs) {
    if (result.errors || result.warmupErrors) notes.push(`[core] ${scenario} [${what}]: ${fmtErrors(result)} in measured runs, ${result.warmupErrors} error(s) in warm-ups`);
  }
  const logs = [
    ...Object.entries(fast.plain ?? {}).map(([kind, p]) => [kind, 'FAST_PATHS=off', p.log]),
    ...fast.paths.flatMap((path) => (path.log ?? []).map((l) => [l.store, `FAST_PATHS=-${path.name}`, l])),
  ];
  for (const [kind, what, summary] of logs) {
    // What the store's own service logged too (its start-up warnings) is noted once, with it.
    const own = new Set((serviceLog[kind]?.notable ?? []).map((entry) => entry.message));
    for (const entry of summary?.notable ?? []) {
      if (!own.has(entry.message)) notes.push(`service log (${what}, ${storeLabel(kind)}): ${entry.count} × ${entry.message}`);
    }
  }
  return notes;
}
