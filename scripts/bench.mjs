#!/usr/bin/env node
// Benchmark harness: `npm run bench` (builds, then runs this file). This file reads the settings,
// runs the plan and writes the results; the parts live in scripts/bench/.
//
// Starts the built service (`node dist/main.js`, default settings except SECRET_TOKEN, PORT and
// DB_URL) on a fresh SQLite store and, when reachable, a fresh PostgreSQL and a fresh MariaDB
// database; next to it a bare node:http server answering a fixed book envelope as the baseline,
// and (per core, with PostgreSQL) a node:http + pg server reading the service's database as the
// floor. wrk (1 thread, 64 connections, scripts/bench/scenario.lua) drives each scenario for
// BENCH_DURATION seconds after a short warm-up, for BENCH_ROUNDS rounds taken round-robin over
// all scenarios; the medians are reported. Peak RSS of every server per half, startup time and
// GET /books at 10,000 books, each on the service and on the Go/Gin reference.
// Writes bench-results/latest.json and docs/benchmarks.md; prints a table. With --render, only
// writes the page and prints the tables again from the last bench-results/latest.json.
//
// Go/Gin reference (bench/go-gin/main.go, a plain Go + Gin + database/sql implementation of the
// same API, the reference the service's speed is compared with): built into a temp dir in
// GOPATH mode from Debian packages (installed with apt-get when missing and running as root),
// started per store on its own fresh store (SQLite file in the temp dir, a fresh PostgreSQL or
// MariaDB database), seeded with the same books through its API, and driven by the same scenarios in the
// same rounds, each of its runs right after the service's run of the same scenario. Reported
// next to the service as "vs Go/Gin" (service req/s / Go/Gin req/s). Skipped, with one line,
// when it cannot be built. The service alone also runs POST /book with a fresh Idempotency-Key
// per request (wrk only; any answer but a fresh 201 stops the run), compared with Go/Gin's plain
// POST /book, which has no keys.
//
// What each speed path buys (per core, within the per-core half): the same service with
// FAST_PATHS=off on every scenario and store, and with FAST_PATHS=-<path> (all but that path)
// on the scenarios where that path acts, each beside the service in the same rounds; their
// startups, memory and each path's lines in src/fast/ (scripts/bench/fast-paths.mjs).
//
// Library scale (scripts/bench/library-scale.mjs): GET /books with limit, sort, q and cursor on a
// fresh store of each kind, migrated empty by the service and grown by bulk SQL to 10,000, 100,000
// and 1,000,000 books (BENCH_LIBRARY_SIZES), pinned, 16 clients, at each size; and GET /books
// without parameters at the largest size against Go/Gin on its own store of the same books.
//
// Environment variables (BENCH_ROUNDS, BENCH_DURATION, BENCH_WARMUP, BENCH_SETTLE, BENCH_STORES,
// BENCH_MODES, BENCH_WORKERS, BENCH_FAST_PATHS, BENCH_FAST_PATHS_STORES, BENCH_LIBRARY_SIZES,
// BENCH_LIBRARY_ROUNDS, BENCH_TOOL, BENCH_GO, GIN_LOGGER, BENCH_KEEP_LOGS, TEST_POSTGRES_URL,
// TEST_MYSQL_URL): scripts/bench/settings.mjs.
//
// scripts/bench/:
//   settings.mjs     paths, fixed parameters, environment variables and defaults
//   plan.mjs         the order of a run, phase by phase
//   children.mjs     child processes, stopping them, cleanup on success, failure and Ctrl-C
//   processes.mjs    starting the service and the baseline, waiting for their first 200
//   baseline-server.mjs  the bare node:http baseline process, and the node:http + pg floor
//   client.mjs       the bench's HTTP client (free port, request, token)
//   stores.mjs       fresh SQLite, PostgreSQL and MariaDB stores
//   seed.mjs         seeding a server through its API
//   startup.mjs      startup times (the service and Go/Gin)
//   scenarios.mjs    the scenario list and the round-robin rounds
//   idempotency.mjs  whether the service honours Idempotency-Key, before its keyed POST /book
//   large-list.mjs   GET /books at 10,000 books (the service and Go/Gin)
//   library-scale.mjs    library scale: its stores, their fills, the measurements at each size
//   library-books.mjs    the books it fills them with, and its searches
//   library-requests.mjs its page requests, the walk to the deep cursors, the answers' checks
//   library-tables.mjs   its tables, targets and notes
//   library-page.mjs     its section of the page
//   fast-paths.mjs   what each speed path buys: its services, startups, lines and report
//   change-feed.mjs  POST /book with and without 100 change-feed subscribers; delivery across instances
//   batch.mjs        POST /batch of 1,000 creates against POST /book
//   alone.mjs        running one of those two phases on its own
//   wrk.mjs          the load generator (wrk, or autocannon) and its output
//   peak-rss.mjs     peak RSS (VmHWM) of a process tree, and RSS (VmRSS) of a process
//   go-gin.mjs       building and running the Go/Gin reference
//   service-log.mjs  summing up the service's log
//   system.mjs       commands and Debian packages on the machine
//   machine.mjs      the machine description
//   stats.mjs        medians and per-scenario summaries
//   format.mjs       number formats and tables
//   tables.mjs       the rows and notes shared by the page and the console
//   report.mjs       the JSON report, and writing it, the page and the console tables
//   page.mjs         the markdown page
//   terminal.mjs     the console tables
//   scenario.lua     wrk's script for every scenario
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { cleanup, handleSignals, isAborted } from './bench/children.mjs';
import { storeLabel } from './bench/format.mjs';
import { log } from './bench/log.mjs';
import { runPlan } from './bench/plan.mjs';
import { buildReport, writeReport } from './bench/report.mjs';
import { RESULTS_DIR, UsageError, readSettings } from './bench/settings.mjs';

// `node scripts/bench.mjs --render`: the page and the tables again from the last run's report
// (bench-results/latest.json), measuring nothing: for a change of how the figures are shown.
if (process.argv[2] === '--render') {
  const report = JSON.parse(readFileSync(join(RESULTS_DIR, 'latest.json'), 'utf8'));
  const stores = Object.entries(report.stores)
    .filter(([, store]) => !store.skipped)
    .map(([kind]) => ({ kind, label: storeLabel(kind) }));
  writeReport(report, stores);
  process.exit(0);
}

handleSignals();
let settings;
try {
  settings = readSettings();
} catch (error) {
  if (error instanceof UsageError) {
    log(`bench: ${error.message}`);
    process.exit(2);
  }
  throw error;
}
try {
  const run = await runPlan(settings);
  writeReport(buildReport(run, settings), run.stores);
  await cleanup();
} catch (error) {
  if (!isAborted()) {
    log(`bench: ${error instanceof UsageError ? error.message : (error.stack ?? error)}`);
    await cleanup();
    process.exit(1);
  }
}
