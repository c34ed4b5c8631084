// The plan of a run, in order: load generator, temp dir, stores, Go/Gin build, startup times,
// then per half (BENCH_MODES: per core, pinned; whole machine) the services (seeded the first
// time), the Go/Gin reference and the baseline started, the rounds and the peak RSS of each;
// Go/Gin's startup times (its stores exist by then); GET /books at 10,000 books on the service
// and Go/Gin (pinned like the first half); library scale (library-scale.mjs: stores of its own,
// grown to each of BENCH_LIBRARY_SIZES); the change feed (change-feed.mjs: writes with and
// without subscribers, delivery across instances); batches of creates against single creates
// (batch.mjs); the logs summed up. "What each speed path buys"
// (fast-paths.mjs) runs within the per-core half: its services beside the half's, in the same
// rounds, and its startups once the half's servers are stopped. Returns what the report is made from.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { onCleanup, stopChild } from './children.mjs';
import { freePort } from './client.mjs';
import { checkConnections, measureFastPathStartups, planFastPaths, startFastPathServices, stopFastPathServices } from './fast-paths.mjs';
import { prepareGoGin, startGoGins } from './go-gin.mjs';
import { honoursIdempotencyKeys } from './idempotency.mjs';
import { measureBatch } from './batch.mjs';
import { measureChangeFeed } from './change-feed.mjs';
import { measureLargeList } from './large-list.mjs';
import { measureLibraryScale } from './library-scale.mjs';
import { log } from './log.mjs';
import { describeMachine } from './machine.mjs';
import { readPeakRss } from './peak-rss.mjs';
import { spawnBaseline, startService, waitForAnswer } from './processes.mjs';
import { buildScenarios, runRounds } from './scenarios.mjs';
import { seedAndCheck } from './seed.mjs';
import { summariseLog } from './service-log.mjs';
import { CONNECTIONS, LOG_DIR, MAIN_JS, SEED_BOOKS, THREADS, UsageError, keepFullLogs, wantedStores } from './settings.mjs';
import { measureGoGinStartup, measureStartup } from './startup.mjs';
import { openStores } from './stores.mjs';
import { chooseTool } from './wrk.mjs';

/** Runs the whole benchmark; returns { started, machine, tool, stores, skipped, goGin, modes, fastPaths, libraryScale }. */
export async function runPlan(settings) {
  if (!existsSync(MAIN_JS)) throw new UsageError(`${relative(process.cwd(), MAIN_JS)} is missing: run \`npm run bench\` (it builds first)`);
  const wanted = wantedStores();
  const tool = chooseTool();
  mkdirSync(LOG_DIR, { recursive: true });

  const tempDir = mkdtempSync(join(os.tmpdir(), 'books-bench-'));
  onCleanup(() => rmSync(tempDir, { recursive: true, force: true }));
  const workDir = join(tempDir, 'cwd');
  mkdirSync(workDir);

  const machine = describeMachine(tool);
  const started = new Date();
  log(
    `bench: ${settings.rounds} round(s) × ${settings.durationS} s (+${settings.warmupS} s warm-up; ${settings.settleS} s per scenario to settle first), ` +
      `${tool.name} ${THREADS} thread / ${CONNECTIONS} connections; ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
      `load ${machine.loadAverageAtStart.join(' ')}`,
  );

  const { stores, skipped } = await openStores(wanted, tempDir);
  for (const store of stores) {
    store.secret = randomBytes(48).toString('base64url');
    store.logFile = join(LOG_DIR, `service-${store.kind}.log`);
    writeFileSync(store.logFile, '');
  }

  // Go/Gin reference: built now, started below once the services are seeded.
  const goGin = await prepareGoGin(settings.goGin, tempDir);

  // What each speed path buys: services of its own, run within the per-core half.
  const fastPaths = planFastPaths(settings.fastPaths, stores, settings.modes);
  if (fastPaths.skipped) log(`bench: what each speed path buys: not measured (${fastPaths.skipped})`);
  else await checkConnections(fastPaths, stores, Boolean(goGin.built));

  await measureStartup(stores, workDir, undefined);

  // The halves of the run (BENCH_MODES): per core (pinned), then the whole machine.
  const modes = [];
  for (const mode of settings.modes) {
    log(`bench: ${mode.label}`);
    const phase = mode.id === 'core' && !fastPaths.skipped ? fastPaths : null;
    modes.push(await runMode(mode, { stores, goGin, tempDir, workDir, tool, settings, fastPaths: phase }));
  }

  await measureGoGinStartup(stores, goGin, workDir);
  await measureLargeList(stores, goGin, workDir, tool, settings);
  const libraryScale = await measureLibraryScale(stores, goGin, { tempDir, workDir, tool, settings });
  await measureChangeFeed(stores, { workDir, tool, settings });
  await measureBatch(stores, { workDir, tool, settings });

  for (const store of stores) {
    store.logSummary = await summariseLog(store.logFile, keepFullLogs());
  }
  for (const service of fastPaths.services.filter((each) => each.logFile)) {
    service.logSummary = await summariseLog(service.logFile, keepFullLogs());
  }
  if (!fastPaths.skipped) {
    const variantS = (fastPaths.scenarios ?? []).filter((scenario) => scenario.variant).reduce((sum, scenario) => sum + scenario.elapsedMs / 1000, 0);
    log(
      `bench: what each speed path buys took ${Math.round(fastPaths.seconds.starts + fastPaths.seconds.startups + variantS)} s ` +
        `(${fastPaths.started} service starts; ${Math.round(variantS)} s of load in the per-core rounds, ${Math.round(fastPaths.seconds.startups)} s of startups)`,
    );
  }
  return { started, machine, tool, stores, skipped, goGin, modes, fastPaths, libraryScale };
}

/**
 * One half of the run: the services (seeded the first time), the Go/Gin reference and the
 * baseline started as `mode` says (pinned or not, WORKERS), the rounds, the peak RSS of each
 * server, everything stopped. With `fastPaths` (per core: the plan of "what each speed path
 * buys"), its services run in the same rounds, and its startups are timed once all is stopped.
 * Returns { mode, scenarios, peaks }.
 */
async function runMode(mode, { stores, goGin, tempDir, workDir, tool, settings, fastPaths }) {
  for (const store of stores) {
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    store.service = service;
    store.seededIds ??= await seedAndCheck(service.port, `${store.label}: `);
    log(`bench: ${store.label}: service pid ${service.child.pid} on port ${service.port}, ${SEED_BOOKS} books seeded`);
  }
  await startGoGins(goGin, stores, tempDir, workDir, mode.serverCpu);
  const baselinePort = await freePort();
  const baseline = spawnBaseline(baselinePort, mode.serverCpu);
  await waitForAnswer(baseline, baselinePort, performance.now(), { method: 'GET', path: '/', what: 'the baseline server' });

  // Per core only: the floor of a PostgreSQL read in one Node process with one query per request
  // (node:http + pg, nothing else), on the service's own seeded database. With WORKERS=N it would compare unlike things.
  const postgres = stores.find((store) => store.kind === 'postgres');
  let floor;
  if (postgres && mode.id === 'core') {
    const port = await freePort();
    floor = { store: postgres, port, child: spawnBaseline(port, mode.serverCpu, postgres.url) };
    const path = `/book/${postgres.seededIds[0]}`;
    await waitForAnswer(floor.child, port, performance.now(), { method: 'GET', path, what: 'the node:http + pg floor' });
  }

  // POST /book with a fresh Idempotency-Key per request needs wrk's script; first, whether each
  // service honours keys at all (one without them ignores the header), for the report.
  const keyed = tool.name === 'wrk';
  if (keyed) {
    for (const store of stores) {
      store.service.keysHonoured = await honoursIdempotencyKeys(store.service.port, store.label);
      log(`bench: ${store.label}: the service ${store.service.keysHonoured ? 'replays' : 'ignores (does not replay)'} a repeated Idempotency-Key`);
    }
  } else {
    log(`bench: POST /book with Idempotency-Key left out: it needs wrk (a fresh key per request), not ${tool.name}`);
  }
  if (fastPaths) await startFastPathServices(fastPaths, workDir, mode.serverCpu);
  const scenarios = buildScenarios(stores, baselinePort, floor, keyed, fastPaths?.services);
  await runRounds(scenarios, tool, settings, mode);
  if (fastPaths) {
    fastPaths.scenarios = scenarios;
    await stopFastPathServices(fastPaths);
  }
  const peaks = { baseline: readPeakRss(baseline.pid) };
  await stopChild(baseline);
  if (floor) await stopChild(floor.child);

  for (const store of stores) {
    peaks[store.kind] = { service: readPeakRss(store.service.child.pid) };
    await stopChild(store.service.child);
    if (store.goGin) {
      peaks[store.kind].goGin = readPeakRss(store.goGin.child.pid);
      await stopChild(store.goGin.child);
    }
  }
  if (fastPaths) await measureFastPathStartups(fastPaths, workDir, mode.serverCpu);
  return { mode, scenarios, peaks };
}
