// Library scale on the page and the console: the pages measured at each size with their ratios,
// GET /books without parameters at the largest size against Go/Gin, the fills, the targets and
// the notes (from the report's `libraryScale`, library-scale.mjs). Tables are [header, rows,
// right-aligned columns], as tables.mjs makes them.
import { fmtErrors, fmtMiB, fmtMs, fmtRatio, fmtRps, storeLabel } from './format.mjs';

/** req/s, with two decimals below 10 (a million-book answer takes seconds). */
const fmtFewRps = (value) => (value != null && value < 10 ? value.toFixed(2) : fmtRps(value));

/** The targets of the library-scale work. */
export const LIBRARY_TARGETS = { scale: 0.8, deep: 0.8, p99Ms: 20, peakRssMiB: 150, fasterThanGoGin: 2 };

/** 10k, 100k, 1M. */
export function fmtBooks(n) {
  if (n >= 1_000_000 && n % 100_000 === 0) return `${n / 1_000_000}M`;
  if (n >= 1_000 && n % 100 === 0) return `${n / 1_000}k`;
  return n.toLocaleString('en-US');
}

/** Per store: its sizes that were measured, and the report of its measured requests by id. */
function measured(library) {
  return Object.entries(library.stores).map(([kind, store]) => {
    const sizes = store.sizes.filter((size) => size.requests);
    return { kind, store, sizes, first: sizes[0], last: sizes.at(-1) };
  });
}

const byId = (size, id) => size?.requests.find((request) => request.id === id);

/** A request's req/s at the largest size ÷ at the smallest (null with one size). */
function scaleRatio({ first, last }, id) {
  if (!first || first === last) return null;
  const [a, b] = [byId(first, id), byId(last, id)];
  return a?.rps && b ? b.rps / a.rps : null;
}

/** A deep page's req/s ÷ its sort's first page's, at `size`. */
function deepRatio(size, request) {
  const first = request.first && byId(size, request.first);
  return first?.rps ? request.rps / first.rps : null;
}

/**
 * The main table: per store and request, req/s and p99 at each size, the largest size ÷ the
 * smallest, deep ÷ first; then GET /books without parameters at the largest size.
 */
export function libraryTable(library) {
  const sizes = library.sizes;
  const header = [
    'request', 'store',
    ...sizes.flatMap((n) => [`req/s ${fmtBooks(n)}`, `p99 ${fmtBooks(n)}`]),
    `${fmtBooks(sizes.at(-1))} ÷ ${fmtBooks(sizes[0])} req/s`, 'deep ÷ first page',
  ];
  const rows = [];
  for (const entry of measured(library)) {
    const at = (n) => entry.sizes.find((size) => size.books === n);
    for (const request of entry.last?.requests ?? []) {
      rows.push([
        request.name,
        storeLabel(entry.kind),
        ...sizes.flatMap((n) => {
          const r = byId(at(n), request.id);
          return [fmtRps(r?.rps), fmtMs(r?.p99Ms)];
        }),
        fmtRatio(scaleRatio(entry, request.id)),
        request.first ? fmtRatio(deepRatio(entry.last, request)) : '',
      ]);
    }
    const list = entry.store.fullList;
    if (list) {
      rows.push([
        `GET /books without parameters (every book, ${list.responseBytes ? `${(list.responseBytes / 2 ** 20).toFixed(0)} MiB` : '–'})`,
        storeLabel(entry.kind),
        ...sizes.flatMap((n) => (n === list.books ? [fmtFewRps(list.rps), fmtMs(list.p99Ms)] : ['–', '–'])),
        '',
        '',
      ]);
    }
  }
  const right = new Set(header.map((_, i) => i).filter((i) => i >= 2));
  return [header, rows, right];
}

/** GET /books without parameters at the largest size: the service against Go/Gin. */
export function fullListTable(library) {
  const header = [
    'store', 'one at a time (median)', 'Go/Gin one at a time', 'Go/Gin time ÷ service time', `req/s (${library.listConnections} clients)`,
    'Go/Gin req/s', 'p99', 'Go/Gin p99', 'errors', 'Go/Gin errors', 'peak RSS', 'Go/Gin peak RSS',
  ];
  // An answer that takes longer than the run under load is not counted by wrk: say so, not "0".
  const rps = (run) => (run && run.requests === 0 ? 'none finished' : fmtFewRps(run?.rps));
  const p99 = (run) => (run && run.requests === 0 ? '–' : fmtMs(run?.p99Ms));
  /** One row: `run` (the service's measurement) beside Go/Gin's `go`. */
  const row = (label, run, go) => {
    const ratio = go?.sequential.medianMs && run.sequential.medianMs ? go.sequential.medianMs / run.sequential.medianMs : null;
    return [
      label, fmtMs(run.sequential.medianMs), fmtMs(go?.sequential.medianMs), fmtRatio(ratio), rps(run), rps(go), p99(run), p99(go),
      fmtErrors(run), go ? fmtErrors(go) : '–', fmtMiB(run.peakRssMiB), fmtMiB(go?.peakRssMiB),
    ];
  };
  const lists = Object.entries(library.stores).filter(([, store]) => store.fullList);
  const rows = lists.map(([kind, { fullList: list }]) => row(storeLabel(kind), list, list.goGin));
  // PostgreSQL and MariaDB without the speed path bulk-lists (pages of 1,000 books).
  for (const [kind, { fullList: list }] of lists) {
    if (list.withoutBulkLists) rows.push(row(`${storeLabel(kind)} without bulk-lists`, list.withoutBulkLists, list.goGin));
  }
  return [header, rows, new Set([1, 2, 3, 4, 5, 6, 7, 10, 11])];
}

const fmtS = (s) => (s == null ? '–' : `${s.toFixed(1)} s`);

/** How long each store took to migrate empty, to grow to each size, and to walk to the deep cursors. */
export function fillTable(library) {
  const sizes = library.sizes;
  const header = [
    'store', 'migrate (empty)',
    ...sizes.map((n, i) => `${i === 0 ? '0' : fmtBooks(sizes[i - 1])} → ${fmtBooks(n)}`),
    'catch-up after each fill', `walks to the deep cursors at ${fmtBooks(sizes.at(-1))}`, `Go/Gin's store 0 → ${fmtBooks(sizes.at(-1))}`,
  ];
  const rows = Object.entries(library.stores).map(([kind, store]) => {
    const walks = store.sizes.at(-1)?.walks;
    const goFill = store.fullList?.goGin?.fill;
    return [
      storeLabel(kind),
      fmtS(store.migrateS),
      ...sizes.map((n) => {
        const fill = store.sizes.find((size) => size.books === n)?.fill;
        return fill ? `${fmtS(fill.fillS)} (${fmtRps(fill.rowsPerS)} rows/s)` : '–';
      }),
      store.sizes.map((size) => fmtS(size.fill.catchUpS)).join(', '),
      walks ? Object.entries(walks).map(([sort, walk]) => `${sort}: ${walk.pages} pages, ${fmtS(walk.s)}`).join('; ') : '–',
      goFill ? `${fmtS(goFill.fillS)} (${fmtRps(goFill.rowsPerS)} rows/s)` : '–',
    ];
  });
  return [header, rows, new Set([1, ...sizes.map((_, i) => i + 2)])];
}

/** The lowest of [label, value] pairs, with the ones below `least` named. */
function lowest(pairs, least) {
  const known = pairs.filter(([, value]) => value != null);
  if (known.length === 0) return { text: '–', met: '–' };
  const [label, value] = known.reduce((low, pair) => (pair[1] < low[1] ? pair : low));
  const misses = known.filter(([, v]) => v < least).length;
  return { text: `${fmtRatio(value)} (${label})${misses > 1 ? `; ${misses} of ${known.length} below` : ''}`, met: misses === 0 ? 'yes' : 'no' };
}

/** Each target per store: [target, wanted, measured, met]. */
export function libraryTargetTable(library) {
  const t = LIBRARY_TARGETS;
  const rows = [];
  const [small, large] = [fmtBooks(library.sizes[0]), fmtBooks(library.sizes.at(-1))];
  for (const entry of measured(library)) {
    const label = storeLabel(entry.kind);
    const requests = entry.last?.requests ?? [];
    if (entry.first && entry.first !== entry.last) {
      const scale = lowest(requests.map((r) => [r.id, scaleRatio(entry, r.id)]), t.scale);
      rows.push([`[${label}] req/s at ${large} ÷ at ${small}, each page request`, `≥ ${t.scale}×`, scale.text, scale.met]);
    }
    const deep = lowest(requests.filter((r) => r.first).map((r) => [r.id, deepRatio(entry.last, r)]), t.deep);
    rows.push([`[${label}] deep page ÷ first page of its sort (req/s) at ${large}`, `≥ ${t.deep}×`, deep.text, deep.met]);
    const p99s = entry.sizes.flatMap((size) => size.requests.map((r) => [`${r.id} at ${fmtBooks(size.books)}`, r.p99Ms]));
    const worst = p99s.reduce((high, pair) => (pair[1] > high[1] ? pair : high), ['', -Infinity]);
    const over = p99s.filter(([, ms]) => ms > t.p99Ms).length;
    rows.push([
      `[${label}] p99 of each page request at each size`, `≤ ${t.p99Ms} ms`,
      p99s.length ? `worst ${fmtMs(worst[1])} (${worst[0]}); ${over} of ${p99s.length} above` : '–',
      p99s.length ? (over === 0 ? 'yes' : 'no') : '–',
    ]);
  }
  for (const [kind, { fullList: list }] of Object.entries(library.stores)) {
    if (!list) continue;
    const label = storeLabel(kind);
    rows.push([`[${label}] GET /books at ${large}: peak RSS`, `≤ ${t.peakRssMiB} MiB`, fmtMiB(list.peakRssMiB), list.peakRssMiB <= t.peakRssMiB ? 'yes' : 'no']);
    const faster = list.fasterThanGoGin;
    rows.push([
      `[${label}] GET /books at ${large}: Go/Gin's time ÷ the service's (one at a time)`, `≥ ${t.fasterThanGoGin}×`,
      faster == null ? '– (no Go/Gin)' : `${fmtRatio(faster)} (${fmtMs(list.sequential.medianMs)} / ${fmtMs(list.goGin.sequential.medianMs)})`,
      faster == null ? '–' : faster >= t.fasterThanGoGin ? 'yes' : 'no',
    ]);
  }
  return [['target', 'wanted', 'measured', 'met'], rows, new Set([1, 2])];
}

/** Wrong answers, errors, skips, and what the phase's services logged besides their start-up warning. */
export function libraryNotes(library, ownWarnings = new Set()) {
  if (!library || library.skipped) return [];
  const notes = [];
  for (const [kind, store] of Object.entries(library.stores)) {
    const label = storeLabel(kind);
    for (const size of store.sizes) {
      const at = `library scale [${label}, ${fmtBooks(size.books)}]`;
      if (size.skipped) notes.push(`${at}: not measured: ${size.skipped}`);
      for (const problem of size.problems ?? []) notes.push(`${at}: wrong answer: ${problem}`);
      for (const r of size.requests ?? []) {
        if (r.errors || r.warmupErrors) notes.push(`${at} ${r.name}: ${fmtErrors(r)}, ${r.warmupErrors} error(s) in warm-ups`);
      }
    }
    for (const [who, list] of [['service', store.fullList], ['Go/Gin', store.fullList?.goGin]]) {
      if (list && (list.errors || list.warmupErrors)) notes.push(`library scale [${label}] GET /books (${who}): ${fmtErrors(list)}, ${list.warmupErrors} in warm-ups`);
    }
    for (const entry of store.log?.notable ?? []) {
      if (!ownWarnings.has(entry.message)) notes.push(`library scale [${label}] service log: ${entry.count} × ${entry.message}`);
    }
  }
  return notes;
}
