// Suites per store: forEachStore(suite) runs a suite once for every store DIALECTS selects,
// each copy inside describe('<kind>') over stores of that kind (createTestStore(kind)).
// Unreachable PostgreSQL/MySQL: describeIf(kind) skips the copy with a visible message, except
// under CI=true, where an unreachable store is a failure (requirements.ts).
// `galera`: the contract suites run once more (as kind 'mysql') on the private 3-node Galera
// cluster the global setup starts; see GALERA_SELECTED / GALERA_SUITES in dialects.ts.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { describeIf } from '../requirements.js';
import { ALL_STORE_KINDS, GALERA_SELECTED, GALERA_SUITES, STORE_KINDS, type StoreKind } from './dialects.js';
import { setGaleraCopyRunning } from './test-store.js';

/**
 * Runs `suite` once per store kind (of `only`, if given), inside `describe('<kind>')`. An unreachable store
 * skips its copy with a message, or fails it under CI.
 */
export function forEachStore(suite: (kind: StoreKind) => void, only?: readonly StoreKind[]) {
  const wanted = (kind: StoreKind) => only === undefined || only.includes(kind);
  for (const kind of STORE_KINDS) {
    // Each store's copy: skipped (reason printed) only outside CI when its server does not answer.
    if (wanted(kind)) describeIf(kind)(kind, () => suite(kind));
  }
  for (const kind of ALL_STORE_KINDS) {
    if (!wanted(kind) || STORE_KINDS.includes(kind)) continue;
    // Skipped on request: DIALECTS left this store out. Registered as a skipped suite so a file
    // whose every store was left out still has one (Vitest fails a file without any suite).
    describe.skip(`${kind} (not in DIALECTS)`, () => suite(kind));
  }
  // Galera speaks MySQL: a suite limited to other stores has no galera copy. Skipped (reason
  // printed) only outside CI when the shared Galera cluster does not answer.
  if (GALERA_SELECTED && (only === undefined || only.includes('mysql')) && GALERA_SUITES.test(expect.getState().testPath ?? '')) {
    describeIf('shared-galera')('galera', () => {
      // Registered first, so it runs before the suite's own hooks: every store the suite
      // creates while this block runs is a database on the cluster.
      beforeAll(() => {
        setGaleraCopyRunning(true);
      });
      afterAll(() => {
        setGaleraCopyRunning(false);
      });
      suite('mysql');
    });
  }
}
