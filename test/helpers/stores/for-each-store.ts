// Suites per store: forEachStore(suite) runs a suite once for every store DIALECTS selects,
// each copy inside describe('<kind>') over stores of that kind (createTestStore(kind)).
// Unreachable PostgreSQL/MySQL: the copy is skipped with a visible message, except under
// CI=true, where an unreachable store is a failure.
// `galera`: the contract suites run once more (as kind 'mysql') on the private 3-node Galera
// cluster the global setup starts; see GALERA_SELECTED / GALERA_SUITES in dialects.ts.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { describeWhenAvailable } from '../ci.js';
import { ALL_STORE_KINDS, GALERA_SELECTED, GALERA_SUITES, STORE_KINDS, type StoreKind } from './dialects.js';
import { setGaleraCopyRunning, sharedGaleraUnavailable, withMysqlAdmin, withPostgresAdmin } from './test-store.js';

/** Undefined when the store answers, else why not. */
async function unreachableReason(kind: StoreKind): Promise<string | undefined> {
  try {
    if (kind === 'postgres') await withPostgresAdmin((client) => client.query('select 1'));
    if (kind === 'mysql') await withMysqlAdmin((connection) => connection.query('select 1'));
    return undefined;
  } catch (error) {
    const where = kind === 'postgres' ? 'TEST_POSTGRES_URL' : 'TEST_MYSQL_URL';
    return `${kind} unreachable (${where}): ${(error as Error).message || (error as { code?: string }).code}`;
  }
}

const reachability = new Map<StoreKind, string | undefined>(
  await Promise.all(STORE_KINDS.map(async (kind) => [kind, await unreachableReason(kind)] as const)),
);

/**
 * Runs `suite` once per store kind (of `only`, if given), inside `describe('<kind>')`. An unreachable store
 * skips its copy with a message, or fails it under CI.
 */
export function forEachStore(suite: (kind: StoreKind) => void, only?: readonly StoreKind[]) {
  const wanted = (kind: StoreKind) => only === undefined || only.includes(kind);
  for (const kind of STORE_KINDS) {
    if (wanted(kind)) describeWhenAvailable(kind, reachability.get(kind), () => suite(kind));
  }
  for (const kind of ALL_STORE_KINDS) {
    if (!wanted(kind) || STORE_KINDS.includes(kind)) continue;
    // Skipped on request: DIALECTS left this store out. Registered as a skipped suite so a file
    // whose every store was left out still has one (Vitest fails a file without any suite).
    describe.skip(`${kind} (not in DIALECTS)`, () => suite(kind));
  }
  // Galera speaks MySQL: a suite limited to other stores has no galera copy.
  if (GALERA_SELECTED && (only === undefined || only.includes('mysql')) && GALERA_SUITES.test(expect.getState().testPath ?? '')) {
    describeWhenAvailable('galera', sharedGaleraUnavailable(), () => {
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
