// The scenarios and their rounds: the baseline, then per store each of the four scenarios on the
// service followed by the same on the Go/Gin reference (and, per core, on the services of "what
// each speed path buys"), and (with wrk) POST /book with a fresh Idempotency-Key per request on
// the service alone (and those); BENCH_ROUNDS rounds taken round-robin over all of them, each run
// after its warm-up.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { checkAborted } from './children.mjs';
import { getToken } from './client.mjs';
import { fmtRun } from './format.mjs';
import { assertGoGinAlive } from './go-gin.mjs';
import { log } from './log.mjs';
import { assertAlive } from './processes.mjs';
import { BOOK_BODY, CREDENTIALS_BODY, SEED_BOOKS, UsageError } from './settings.mjs';
import { runLoad } from './wrk.mjs';

/** The four scenarios against one server (the service or the Go/Gin reference) and its store. */
function storeScenarios(port, seededIds, store) {
  const maxSeeded = Math.max(...seededIds);
  return [
    {
      id: 'get-book',
      name: `GET /book/:id (${SEED_BOOKS} ids in turn)`,
      run: async () => ({ port, paths: seededIds.map((id) => `/book/${id}`), token: await getToken(port) }),
    },
    { id: 'list-books', name: `GET /books (${SEED_BOOKS} books)`, run: async () => ({ port, path: '/books', token: await getToken(port) }) },
    { id: 'login', name: 'POST /token', run: () => ({ port, method: 'POST', path: '/token', body: CREDENTIALS_BODY }) },
    {
      id: 'create-book',
      name: 'POST /book',
      run: async () => ({ port, method: 'POST', path: '/book', body: BOOK_BODY, token: await getToken(port) }),
      // Back to the seeded books, so GET /books lists SEED_BOOKS books in the next round.
      // Requests still queued for the pool when wrk disconnects are completed by the server
      // afterwards, so repeat until no late insert lands after the delete.
      after: async () => {
        let left;
        for (let attempt = 1; attempt <= 40; attempt += 1) {
          left = await store.resetTo(maxSeeded);
          await sleep(250);
          if (left === SEED_BOOKS && (await store.resetTo(maxSeeded)) === SEED_BOOKS) return;
        }
        throw new Error(`${store.label}: ${left} books after reset, expected ${SEED_BOOKS}`);
      },
    },
  ];
}

/**
 * POST /book with a fresh Idempotency-Key per request, on the service only: Go/Gin has no keys,
 * so the row is compared with Go/Gin's plain POST /book of the same rounds. Any answer but a
 * fresh 201 (a 409 or 422 would mean keys collide, a replay that one repeated) stops the bench
 * instead of being counted. `keysHonoured`: what honoursIdempotencyKeys found.
 */
function keyedCreateScenario(createBook, keysHonoured) {
  return {
    ...createBook,
    id: 'create-book-idempotent',
    goId: 'create-book',
    name: 'POST /book with Idempotency-Key (a fresh key per request), vs Go/Gin\'s plain POST /book',
    keysHonoured,
    run: async () => ({ ...(await createBook.run()), idempotencyKeys: true, expectStatus: 201 }),
  };
}

/**
 * All scenarios of the run, in the order of a round; the baseline first. `floor` (per core, with
 * PostgreSQL): { store, port } of the node:http + pg server, run as `GET /book/:id` beside
 * the service's and compared with Go/Gin's `GET /book/:id`. `keyed`: whether the keyed POST /book
 * runs (it needs wrk), right after Go/Gin's POST /book; each service's `keysHonoured` is set.
 * `variants` (the services of "what each speed path buys", fast-paths.mjs: each { store, label,
 * port, child, logFile, scenarios: 'all' or ids }): each runs its scenarios on the same store,
 * right after the service's run (and Go/Gin's) of the same scenario.
 */
export function buildScenarios(stores, baselinePort, floor, keyed, variants = []) {
  const scenarios = [
    {
      id: 'baseline',
      name: 'GET (bare node:http, fixed book JSON)',
      label: 'GET (bare node:http, fixed book JSON)',
      target: 'baseline',
      store: null,
      run: () => ({ port: baselinePort, path: '/book/1' }),
    },
  ];
  for (const store of stores) {
    // The service's scenarios, or another service's on the same store (a variant).
    const scenariosOn = (port) => {
      const list = storeScenarios(port, store.seededIds, store);
      if (keyed) list.push(keyedCreateScenario(list.find((scenario) => scenario.id === 'create-book'), store.service.keysHonoured));
      return list;
    };
    const twins = variants
      .filter((variant) => variant.store === store)
      .map((variant) =>
        scenariosOn(variant.port)
          .filter((scenario) => variant.scenarios === 'all' || variant.scenarios.includes(scenario.id))
          .map((scenario) => ({
            ...scenario,
            label: `${scenario.name} [${variant.label}]`,
            target: 'variant',
            variant,
            store,
            assertAlive: () => assertAlive(variant.child, variant),
          })),
      );
    const service = scenariosOn(store.service.port).map((scenario) => ({
      ...scenario,
      label: `${scenario.name} [${store.label}]`,
      target: 'service',
      store,
      assertAlive: () => assertAlive(store.service.child, store),
    }));
    const go = store.goGin
      ? storeScenarios(store.goGin.port, store.goGin.seededIds, store.goGin.store).map((scenario) => ({
          ...scenario,
          label: `${scenario.name} [${store.goGin.label}]`,
          target: 'go-gin',
          store,
          assertAlive: () => assertGoGinAlive(store.goGin),
        }))
      : [];
    // Each service scenario followed by its Go/Gin twin and its variants; the keyed one (no Go/Gin twin) comes last.
    service.forEach((scenario, i) =>
      scenarios.push(scenario, ...(go[i] ? [go[i]] : []), ...twins.flatMap((list) => list.filter((twin) => twin.id === scenario.id))),
    );
    if (floor?.store === store) {
      scenarios.push({
        id: 'get-book-floor',
        goId: 'get-book',
        name: `GET /book/:id: floor, bare node:http + pg (${SEED_BOOKS} ids in turn)`,
        label: `GET /book/:id floor, node:http + pg [${store.label}]`,
        target: 'floor',
        store,
        run: () => ({ port: floor.port, paths: store.seededIds.map((id) => `/book/${id}`) }),
      });
    }
  }
  for (const scenario of scenarios) {
    scenario.rounds = [];
    scenario.warmups = [];
    scenario.elapsedMs = 0;
  }
  return scenarios;
}

/** One load run of a scenario; a failure says which scenario (or, first, that its server died). */
async function runScenarioLoad(tool, scenario, options) {
  try {
    return await runLoad(tool, options);
  } catch (error) {
    scenario.assertAlive?.();
    if (error instanceof UsageError) throw error;
    throw new Error(`${scenario.label}: ${error.message}`, { cause: error });
  }
}

/** Runs the rounds (wrk pinned as `mode` says); each scenario collects its measured runs and warm-ups. */
export async function runRounds(scenarios, tool, settings, mode) {
  // Once per half, before round 1: every server runs each of its scenarios for a while, so that
  // round 1 measures compiled code and full pools as the later rounds do (without it, the
  // node:http + pg floor climbed from round to round: docs/benchmarks-changes.md).
  if (settings.settleS > 0) {
    for (const scenario of scenarios) {
      checkAborted();
      scenario.assertAlive?.();
      const t0 = performance.now();
      await runScenarioLoad(tool, scenario, { ...(await scenario.run()), cpu: mode.loadCpu, duration: settings.settleS });
      await scenario.after?.();
      scenario.elapsedMs += performance.now() - t0;
    }
    log(`bench: [${mode.id}] every scenario ran ${settings.settleS} s to settle (not counted)`);
  }
  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const scenario of scenarios) {
      checkAborted();
      scenario.assertAlive?.();
      const label = scenario.label;
      const t0 = performance.now();
      const options = { ...(await scenario.run()), cpu: mode.loadCpu };
      if (settings.warmupS > 0) scenario.warmups.push(await runScenarioLoad(tool, scenario, { ...options, duration: settings.warmupS }));
      const result = await runScenarioLoad(tool, scenario, { ...options, duration: settings.durationS });
      scenario.rounds.push(result);
      await scenario.after?.();
      scenario.elapsedMs += performance.now() - t0;
      log(`bench: [${mode.id}] round ${round}/${settings.rounds} ${label}: ${fmtRun(result)}`);
    }
  }
}
