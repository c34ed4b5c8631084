// Suites that need the shared PostgreSQL server (TEST_POSTGRES_URL) and nothing else:
// several service processes on one database, signals under load. Like forEachStore, an
// unreachable server skips the suite with a visible warning, except under CI=true, where it
// fails. DIALECTS without `postgres` skips them too (an explicit narrowing, not a failure).
import { describe } from 'vitest';
import { describeWhenAvailable } from './ci.js';
import { STORE_KINDS } from './stores/dialects.js';
import { POSTGRES_ADMIN_URL, withPostgresAdmin } from './stores/test-store.js';

async function postgresUnreachable(): Promise<string | undefined> {
  try {
    await withPostgresAdmin((client) => client.query('select 1'));
    return undefined;
  } catch (error) {
    return `postgres unreachable (TEST_POSTGRES_URL=${POSTGRES_ADMIN_URL.replace(/:[^:@/]*@/, ':***@')}): ${(error as Error).message || (error as { code?: string }).code}`;
  }
}

const selected = STORE_KINDS.includes('postgres');
const unreachable = selected ? await postgresUnreachable() : undefined;

export function describeWithPostgres(title: string, suite: () => void) {
  if (!selected) {
    console.warn(`\n⚠ SKIPPING "${title}": DIALECTS does not include postgres\n`);
    // Skipped on request: DIALECTS narrows the run to other stores.
    describe.skip(title, suite);
    return;
  }
  describeWhenAvailable(title, unreachable, suite);
}
