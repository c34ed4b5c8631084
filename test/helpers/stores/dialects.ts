// Which stores the suites run against: DIALECTS (sqlite, postgres, mysql, galera) narrows the
// run, like Kysely's own test harness; GALERA_SUITES picks the files that get a `galera` copy.

export type StoreKind = 'sqlite' | 'postgres' | 'mysql';

export const ALL_STORE_KINDS: readonly StoreKind[] = ['sqlite', 'postgres', 'mysql'];
/** `DIALECTS=sqlite,postgres` narrows the run. */
export const STORE_KINDS: StoreKind[] = (process.env.DIALECTS ?? ALL_STORE_KINDS.join(','))
  .split(',')
  .map((kind) => kind.trim())
  .filter((kind): kind is StoreKind => (ALL_STORE_KINDS as readonly string[]).includes(kind));

/** The stores that are servers, not files: PostgreSQL and MySQL. */
export const SERVER_STORES: readonly StoreKind[] = ['postgres', 'mysql'];

/**
 * The `galera` copy of the store suites (for-each-store.ts): runs unless DIALECTS is set
 * without `galera`, and only for test files matching GALERA_SUITES (a regular expression on
 * the file path). Default: the contract suites that go through the store, create, get, list,
 * update and delete (the others test tokens and HTTP framing, the same on every store; a full
 * copy costs ~1 min more of `npm test`). `GALERA_SUITES='/test/contract/(?!book-ids)'` runs
 * them all but book-ids, whose "the next id is the one after AUTO_INCREMENT" does not hold on Galera
 * (each node hands out ids in steps of the cluster size from its own offset).
 */
export const GALERA_SELECTED =
  process.env.DIALECTS === undefined ||
  process.env.DIALECTS.split(',')
    .map((kind) => kind.trim())
    .includes('galera');
export const GALERA_SUITES = new RegExp(process.env.GALERA_SUITES ?? '[\\\\/]test[\\\\/]contract[\\\\/]((create|get|list|update|delete)-books?|list-pages|batch)\\.test\\.ts$');

/**
 * What the global setup (test/global-setup.ts) hands the test workers about the shared cluster
 * it starts for the `galera` copies of the contract suites (for-each-store.ts): the nodes'
 * MySQL ports, or why there is no cluster.
 */
export type SharedGalera = { ports: number[] } | { unavailable: string };

declare module 'vitest' {
  export interface ProvidedContext {
    sharedGalera: SharedGalera;
  }
}
