// What the page and the console both show, from the report: the tables (each as
// [header, rows, right-aligned columns]), the Go/Gin skips, and the notes (errors seen, what the
// logs said besides 2xx request lines).
import { fmtErrors, fmtMiB, fmtMs, fmtRatio, fmtRps, storeLabel } from './format.mjs';
import { LARGE_BOOKS, SEED_BOOKS, STARTUP_SAMPLES } from './settings.mjs';

const RESULT_HEADER = ['scenario', 'store', 'req/s', 'p50', 'p99', 'errors', 'vs node:http', 'vs Go/Gin'];
const GO_HEADER = ['scenario', 'store', 'Go/Gin req/s', 'p50', 'p99', 'errors', 'vs node:http', 'service / Go/Gin'];
const RATE_RIGHT = new Set([2, 3, 4, 6, 7]);
const LARGE_HEADER = ['store', 'req/s', 'p50', 'p99', 'errors', 'one at a time (median of 20)', 'response'];
const RSS_HEADER = [
  'store',
  `peak RSS, ${SEED_BOOKS}-book scenarios`,
  `peak RSS, GET /books at ${LARGE_BOOKS.toLocaleString('en-US')}`,
  `Go/Gin peak RSS, ${SEED_BOOKS}-book scenarios`,
];
const STARTUP_HEADER = ['store', `startup (median of ${STARTUP_SAMPLES})`, 'first start (empty store, migrations)', 'samples (ms)'];

/** The service (and the baseline) per scenario and store. */
export function resultTable(report) {
  return [RESULT_HEADER, resultRows(report), RATE_RIGHT];
}

function resultRows(report) {
  return report.results.map((r) => [
    r.scenario,
    storeLabel(r.store),
    fmtRps(r.rps),
    fmtMs(r.p50Ms),
    fmtMs(r.p99Ms),
    fmtErrors(r),
    fmtRatio(r.ratioToBaseline),
    fmtRatio(r.ratioToGoGin),
  ]);
}

/** The Go/Gin reference's own figures, per scenario and store (no rows when it did not run). */
export function goGinTable(report) {
  return [GO_HEADER, goGinRows(report), RATE_RIGHT];
}

function goGinRows(report) {
  return report.results
    .filter((r) => r.goGin)
    .map((r) => [
      r.scenario,
      storeLabel(r.store),
      fmtRps(r.goGin.rps),
      fmtMs(r.goGin.p50Ms),
      fmtMs(r.goGin.p99Ms),
      fmtErrors(r.goGin),
      fmtRatio(r.goGin.ratioToBaseline),
      fmtRatio(r.ratioToGoGin),
    ]);
}

/** The per-store tables: GET /books at LARGE_BOOKS (large), memory (rss) and startup. */
export function storeTables(report, stores) {
  const rows = extraRows(report, stores);
  return {
    large: [LARGE_HEADER, rows.map((r) => r.large), new Set([1, 2, 3, 5, 6])],
    rss: [RSS_HEADER, rows.map((r) => r.rss), new Set([1, 2, 3])],
    startup: [STARTUP_HEADER, rows.map((r) => r.startup), new Set([1, 2])],
  };
}

/** Per store: its rows of the memory, large-list and startup tables. */
function extraRows(report, stores) {
  return stores.map((store) => {
    const large = report.largeList[store.kind];
    return {
      rss: [
        store.label,
        fmtMiB(report.peakRssMiB[store.kind]),
        fmtMiB(large.peakRssMiB),
        fmtMiB(report.goGin.stores?.[store.kind]?.peakRssMiB),
      ],
      large: [
        store.label,
        fmtRps(large.rps),
        fmtMs(large.p50Ms),
        fmtMs(large.p99Ms),
        fmtErrors(large),
        fmtMs(large.sequential.medianMs),
        `${(large.responseBytes / 1024).toFixed(0)} KiB`,
      ],
      startup: [
        store.label,
        fmtMs(report.startup[store.kind].medianMs),
        fmtMs(report.startup[store.kind].firstStartMs),
        report.startup[store.kind].samplesMs.map((ms) => Math.round(ms)).join(', '),
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
  for (const result of report.results) {
    if (result.errors || result.warmupErrors) {
      notes.push(
        `${result.scenario} [${storeLabel(result.store)}]: ${fmtErrors(result)} in measured runs, ` +
          `${result.warmupErrors} error(s) in warm-ups`,
      );
    }
    if (result.goGin && (result.goGin.errors || result.goGin.warmupErrors)) {
      notes.push(
        `${result.scenario} [Go/Gin, ${storeLabel(result.store)}]: ${fmtErrors(result.goGin)} in measured runs, ` +
          `${result.goGin.warmupErrors} error(s) in warm-ups`,
      );
    }
  }
  for (const [kind, large] of Object.entries(report.largeList)) {
    if (large.errors || large.warmupErrors) {
      notes.push(`GET /books at ${LARGE_BOOKS} [${storeLabel(kind)}]: ${fmtErrors(large)}, ${large.warmupErrors} in warm-ups`);
    }
  }
  for (const [kind, summary] of Object.entries(report.serviceLog)) {
    for (const entry of summary.notable) {
      notes.push(`${storeLabel(kind)} service log: ${entry.count} × ${entry.message}`);
    }
  }
  for (const [kind, s] of Object.entries(report.goGin.stores ?? {})) {
    if (s.log?.notable) {
      notes.push(`Go/Gin (${storeLabel(kind)}) log: ${s.log.notable} line(s) besides its start, e.g. ${s.log.examples[0]}`);
    }
  }
  return notes;
}
