// The results of a run: the report object (bench-results/latest.json), and writing it, the page
// (docs/benchmarks.md) and the console tables.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { fastPathsReport } from './fast-paths.mjs';
import { goGinLogSummary } from './go-gin.mjs';
import { renderMarkdown } from './page.mjs';
import { DOCS_FILE, GO_DIR, LUA_SCRIPT, RESULTS_DIR, ROOT } from './settings.mjs';
import { median, round1, summarise } from './stats.mjs';
import { renderConsole } from './terminal.mjs';

/** Per scenario of the service (and the baseline): its summary, and the Go/Gin one beside it. */
function scenarioResults(scenarios) {
  const baselineRps = median(scenarios[0].rounds.map((r) => r.rps));
  const summaries = new Map(scenarios.map((scenario) => [scenario, summarise(scenario.rounds, scenario.warmups)]));
  return scenarios
    // Go/Gin's figures go beside the service's; the variants' (what each speed path buys) in fastPaths.
    .filter((scenario) => scenario.target !== 'go-gin' && scenario.target !== 'variant')
    .map((scenario) => {
      const summary = summaries.get(scenario);
      const goId = scenario.goId ?? scenario.id;
      const go = scenarios.find((o) => o.target === 'go-gin' && o.store === scenario.store && o.id === goId);
      const goSummary = go ? summaries.get(go) : null;
      return {
        id: scenario.id,
        scenario: scenario.name,
        store: scenario.store?.kind ?? 'node:http',
        // A row measured against another Go/Gin scenario (the floor, the keyed POST /book) names it.
        ...(scenario.goId ? { goGinScenario: go?.name ?? null } : {}),
        ...(scenario.keysHonoured === undefined ? {} : { keysHonoured: scenario.keysHonoured }),
        ...summary,
        ratioToBaseline: baselineRps ? summary.rps / baselineRps : null,
        ratioToGoGin: goSummary?.rps ? summary.rps / goSummary.rps : null,
        p99ToGoGin: goSummary?.p99Ms ? summary.p99Ms / goSummary.p99Ms : null,
        goGin: goSummary && { ...goSummary, ratioToBaseline: baselineRps ? goSummary.rps / baselineRps : null },
      };
    });
}

const mib = (peak) => peak && { peakRssMiB: round1(peak.peakRssMiB), largestProcessMiB: round1(peak.largestProcessMiB), processes: peak.processes };

/** One half of the run (per core, whole machine): how it was run, its results and peak RSS. */
function modeReport({ mode, scenarios, peaks }) {
  return {
    id: mode.id,
    label: mode.label,
    workers: mode.workers ?? 1,
    serverCpu: mode.serverCpu ?? null,
    loadCpu: mode.loadCpu ?? null,
    results: scenarioResults(scenarios),
    peakRss: {
      baseline: mib(peaks.baseline),
      ...Object.fromEntries(
        Object.entries(peaks)
          .filter(([kind]) => kind !== 'baseline')
          .map(([kind, p]) => [kind, { service: mib(p.service), goGin: mib(p.goGin) }]),
      ),
    },
  };
}

/** The Go/Gin part of the report: how it was built, per store its figures or why it was skipped. */
function goGinReport(goGin, stores) {
  return {
    source: relative(ROOT, join(GO_DIR, 'main.go')),
    mode: goGin.mode,
    ...(goGin.skipped ? { skipped: goGin.skipped } : {}),
    ...(goGin.built
      ? {
          go: goGin.built.goVersion,
          debianPackages: goGin.built.packages,
          buildS: goGin.built.buildS,
          requestLog: goGin.built.logger,
          stores: Object.fromEntries(
            stores.map((store) => [
              store.kind,
              store.goGin
                ? {
                    description: store.goGin.description,
                    log: { file: relative(ROOT, store.goGin.logFile), ...goGinLogSummary(store.goGin.logFile) },
                  }
                : { skipped: store.goGinSkipped },
            ]),
          ),
        }
      : {}),
  };
}

/** The report of a run (what runPlan returned), as written to bench-results/latest.json. */
export function buildReport({ started, machine, tool, stores, skipped, goGin, modes, fastPaths, libraryScale }, settings) {
  const modeReports = modes.map(modeReport);
  return {
    generatedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    settings: {
      ...settings,
      modes: settings.modes.map((mode) => mode.id),
      warmupBeforeEachRun: true,
      tool: tool.name,
      luaScript: relative(ROOT, LUA_SCRIPT),
    },
    stores: Object.fromEntries([
      ...stores.map((store) => [store.kind, { description: store.description }]),
      ...Object.entries(skipped).map(([kind, reason]) => [kind, { skipped: reason }]),
    ]),
    modes: modeReports,
    largeList: Object.fromEntries(stores.map((store) => [store.kind, store.largeList])),
    // GET /books with limit, sort, q and cursor from 10,000 to 1,000,000 books (library-scale.mjs).
    libraryScale,
    // POST /book with and without 100 change-feed subscribers, and delivery across instances (change-feed.mjs).
    changeFeed: Object.fromEntries(stores.map((store) => [store.kind, store.changeFeed])),
    // POST /batch of 1,000 creates against POST /book (batch.mjs).
    batch: Object.fromEntries(stores.map((store) => [store.kind, store.batch])),
    startup: Object.fromEntries(stores.map((store) => [store.kind, store.startup])),
    goGin: goGinReport(goGin, stores),
    // What each speed path buys: the all-on service against the plain one and against each path left out.
    fastPaths: fastPathsReport(fastPaths, modeReports.find((mode) => mode.id === 'core'), settings),
    serviceLog: Object.fromEntries(
      stores.map((store) => [store.kind, { file: relative(ROOT, store.logFile), ...store.logSummary }]),
    ),
  };
}

/** Writes the JSON file and the page, and prints the tables. */
export function writeReport(report, stores) {
  const resultsFile = join(RESULTS_DIR, 'latest.json');
  const docsFile = DOCS_FILE;
  writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
  mkdirSync(dirname(docsFile), { recursive: true });
  writeFileSync(docsFile, renderMarkdown(report, stores));
  process.stdout.write(renderConsole(report, stores));
  process.stdout.write(`\nWrote ${relative(process.cwd(), resultsFile)} and ${relative(process.cwd(), docsFile)}\n`);
}
