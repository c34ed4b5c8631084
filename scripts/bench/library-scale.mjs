// Library scale: GET /books with limit, sort, q and cursor as the collection grows. Per store kind
// of the run: a fresh store, migrated empty by the service (`node dist/main.js migrate`), then
// grown by bulk SQL (stores.mjs fillTo, while no server runs: the store's own indexes, triggers
// and generated columns are filled as for any write) to each size of BENCH_LIBRARY_SIZES in turn,
// never refilled; each fill timed. At each size a fresh service process, pinned like the per-core
// half, serves the pages of library-requests.mjs to LIBRARY_CONNECTIONS clients. At the largest
// size, GET /books without parameters (every book) is timed and its peak RSS read, on the
// service and on the Go/Gin reference's own store grown to the same books.
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { runProcess, stopChild } from './children.mjs';
import { getToken } from './client.mjs';
import { spawnGoGin } from './go-gin.mjs';
import { measureServer } from './large-list.mjs';
import { LIBRARY_QUERIES, expectedMatches, libraryBook } from './library-books.mjs';
import { checkRequest, honoursListParameters, libraryRequests } from './library-requests.mjs';
import { log } from './log.mjs';
import { readPeakRss } from './peak-rss.mjs';
import { assertAlive, childEnv, startService } from './processes.mjs';
import { runRounds } from './scenarios.mjs';
import { summariseLog } from './service-log.mjs';
import {
  LIBRARY_CONNECTIONS,
  LIBRARY_LIST_CONNECTIONS,
  LIBRARY_LIST_MIN_DURATION_S,
  LIBRARY_LIST_SAMPLES,
  LIBRARY_LIST_TIMEOUT_S,
  LIBRARY_PAGE,
  LIBRARY_TIMEOUT_S,
  LOAD_CPU,
  LOG_DIR,
  MAIN_JS,
  SERVER_CPU,
  keepFullLogs,
} from './settings.mjs';
import { round1, summarise } from './stats.mjs';
import { createMysqlStore, createPostgresStore, createSqliteStore } from './stores.mjs';

/** Pinned as the per-core half: servers on SERVER_CPU, wrk on LOAD_CPU. */
const MODE = { id: 'library', loadCpu: LOAD_CPU, serverCpu: SERVER_CPU };
const count = (n) => n.toLocaleString('en-US');
const seconds = (ms) => round1(ms / 1000);

function freshStore(kind, tempDir, dirName) {
  if (kind === 'sqlite') return createSqliteStore(tempDir, dirName);
  if (kind === 'postgres') return createPostgresStore();
  return createMysqlStore();
}

/** Grows `store` from `from` to `to` library books, then lets it catch up; returns the timings. */
async function grow(store, from, to) {
  const t0 = performance.now();
  const have = await store.fillTo(to, libraryBook);
  if (have !== to) throw new Error(`${store.label}: ${have} books after filling, expected ${to}`);
  const t1 = performance.now();
  await store.catchUp();
  const fill = { from, to, fillS: seconds(t1 - t0), catchUpS: seconds(performance.now() - t1) };
  fill.rowsPerS = Math.round((to - from) / ((t1 - t0) / 1000));
  log(`bench: library scale [${store.label}]: ${count(from)} → ${count(to)} books in ${fill.fillS} s (${count(fill.rowsPerS)} rows/s), then ${fill.catchUpS} s to catch up`);
  return fill;
}

/**
 * Sets up and measures every store kind of the run; returns the report's `libraryScale`:
 * { sizes, rounds, connections, page, stores: { kind: … } } or { skipped }.
 */
export async function measureLibraryScale(stores, goGin, { tempDir, workDir, tool, settings }) {
  const selection = settings.library;
  if (selection.off) return { skipped: selection.off };
  const t0 = performance.now();
  const context = { tempDir, workDir, tool, settings, goGin, sizes: selection.sizes, rounds: selection.rounds };
  const results = {};
  for (const base of stores) results[base.kind] = await measureKind(base, context);
  return {
    sizes: selection.sizes,
    rounds: selection.rounds,
    connections: LIBRARY_CONNECTIONS,
    listConnections: LIBRARY_LIST_CONNECTIONS,
    page: LIBRARY_PAGE,
    queries: LIBRARY_QUERIES,
    stores: results,
    seconds: Math.round((performance.now() - t0) / 1000),
  };
}

/** One store kind: its fresh store migrated, grown size by size and measured at each. */
async function measureKind(base, context) {
  const store = await freshStore(base.kind, context.tempDir, 'library-sqlite');
  Object.assign(store, { secret: base.secret, logFile: join(LOG_DIR, `library-${base.kind}.log`) });
  writeFileSync(store.logFile, '');
  const t0 = performance.now();
  await runProcess(process.execPath, [MAIN_JS, 'migrate'], childEnv({ DB_URL: store.url }), { cwd: context.workDir });
  const result = { migrateS: seconds(performance.now() - t0), sizes: [] };
  let have = 0;
  for (const books of context.sizes) {
    const fill = await grow(store, have, books);
    have = books;
    result.sizes.push({ books, fill, ...(await measureSize(store, books, context)) });
  }
  result.fullList = await measureFullList(store, base, have, context);
  result.log = await summariseLog(store.logFile, keepFullLogs());
  await store.drop();
  return result;
}

/** A fresh service on `store` at `books` books: the pages, checked, then under load; its peak RSS. */
async function measureSize(store, books, { workDir, tool, settings, rounds }) {
  // The machine may be shared: its load when this size's measurements began goes with them.
  const loadAverage = os.loadavg().map((load) => Math.round(load * 100) / 100);
  const service = await startService(store, workDir, undefined, SERVER_CPU);
  try {
    const { port } = service;
    const token = await getToken(port);
    if (!(await honoursListParameters(port, token))) {
      log(`bench: library scale [${store.label}]: the service ignores limit: list parameters not measured`);
      return { loadAverage, skipped: 'the service ignores limit (GET /books?limit=1 gave every book): this build has no list parameters' };
    }
    const matches = expectedMatches(LIBRARY_QUERIES, books);
    const { requests, walks } = await libraryRequests(port, token, books, LIBRARY_QUERIES, matches);
    for (const [sort, walk] of Object.entries(walks)) {
      log(`bench: library scale [${store.label}, ${count(books)}]: sort=${sort}: ${walk.pages} pages walked to the deep cursor in ${seconds(walk.ms)} s`);
    }
    const problems = [];
    for (const each of requests) problems.push(...(await checkRequest(port, token, each)).map((problem) => `${each.name}: ${problem}`));
    for (const problem of problems) log(`bench: library scale [${store.label}, ${count(books)}]: wrong answer: ${problem}`);
    const scenarios = requests.map((each) => ({
      ...each,
      label: `${each.name} [${store.label}, ${count(books)} books]`,
      rounds: [],
      warmups: [],
      elapsedMs: 0,
      run: async () => ({ port, path: each.path, paths: each.paths, token: await getToken(port), connections: LIBRARY_CONNECTIONS, timeoutS: LIBRARY_TIMEOUT_S }),
      assertAlive: () => assertAlive(service.child, store),
    }));
    await runRounds(scenarios, tool, { ...settings, settleS: 0, rounds }, MODE);
    return {
      loadAverage,
      matches,
      walks: Object.fromEntries(Object.entries(walks).map(([sort, walk]) => [sort, { rows: walk.rows, pages: walk.pages, s: seconds(walk.ms) }])),
      problems,
      peakRssMiB: round1(readPeakRss(service.child.pid).peakRssMiB),
      requests: scenarios.map((s) => ({ id: s.id, name: s.name, first: s.first, ...summarise(s.rounds, s.warmups) })),
    };
  } finally {
    await stopChild(service.child);
  }
}

/**
 * GET /books without parameters at `books` books: a fresh service, then (when built) a fresh
 * Go/Gin process on its own fresh store grown to the same books; one at a time and under load.
 */
async function measureFullList(store, base, books, { workDir, tool, settings, goGin, tempDir }) {
  const shape = { books, samples: LIBRARY_LIST_SAMPLES, timeoutS: LIBRARY_LIST_TIMEOUT_S, connections: LIBRARY_LIST_CONNECTIONS };
  const listSettings = { rounds: 1, warmupS: settings.warmupS, durationS: Math.max(settings.durationS, LIBRARY_LIST_MIN_DURATION_S) };
  const service = await startService(store, workDir, undefined, SERVER_CPU);
  const result = await measureServer(`${store.label}, ${count(books)} books`, service, tool, listSettings, MODE, shape);
  if (store.kind !== 'sqlite') {
    // What the speed path bulk-lists buys: the same list read in pages of 1,000 (docs/benchmarks.md).
    const plainPages = await startService(store, workDir, undefined, SERVER_CPU, '-bulk-lists');
    result.withoutBulkLists = await measureServer(`${store.label}, ${count(books)} books, without bulk-lists`, plainPages, tool, listSettings, MODE, shape);
  }
  if (!goGin.built || base.goGinSkipped) return result;
  const target = {
    kind: store.kind,
    label: `Go/Gin, ${store.label}`,
    secret: store.secret,
    logFile: join(LOG_DIR, `library-go-gin-${store.kind}.log`),
    store: await freshStore(store.kind, tempDir, 'library-go-gin-sqlite'),
  };
  writeFileSync(target.logFile, '');
  // Its first process creates its table; then it is grown while stopped, as the service's store was.
  await stopChild((await spawnGoGin(goGin.built, target, workDir, undefined)).child);
  const fill = await grow(target.store, 0, books);
  const child = await spawnGoGin(goGin.built, target, workDir, SERVER_CPU);
  const reference = await measureServer(`${target.label}, ${count(books)} books`, child, tool, listSettings, MODE, shape);
  await target.store.drop();
  return {
    ...result,
    goGin: { ...reference, fill },
    // Above 1×: the service is that many times faster (time), or lighter (RSS below 1×).
    fasterThanGoGin: result.sequential.medianMs ? reference.sequential.medianMs / result.sequential.medianMs : null,
    rpsToGoGin: reference.rps ? result.rps / reference.rps : null,
    peakRssToGoGin: reference.peakRssMiB ? result.peakRssMiB / reference.peakRssMiB : null,
  };
}
