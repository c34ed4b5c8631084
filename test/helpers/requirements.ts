// The one gate for suites that need something the machine may lack: `describeIf(requirement)`.
// Each requirement is detected in one place and named by one skip reason. Missing on a
// developer's machine: the suite is skipped with a visible warning. Missing under CI=true: one
// failing test says what is missing instead (CI is supposed to provide every requirement).
// A store that DIALECTS leaves out is skipped on request, under CI too: that is a narrowing of
// the run, not something missing.
import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { CHROMIUM } from './infra/chromium.js';
import { privateGaleraUnavailable } from './infra/galera-cluster.js';
import { nginxMissing } from './infra/nginx.js';
import { privatePostgresUnavailable } from './infra/postgres-cluster.js';
import { redisServerMissing } from './infra/redis-server.js';
import { smallVolumeMissing } from './infra/small-volume.js';
import { STORE_KINDS } from './stores/dialects.js';
import { MYSQL_ADMIN_URL, POSTGRES_ADMIN_URL, sharedGaleraUnavailable, withMysqlAdmin, withPostgresAdmin } from './stores/test-store.js';

const IS_CI = process.env.CI === 'true' || process.env.CI === '1';

export type Requirement =
  /** A file store: always there. */
  | 'sqlite'
  /** The shared PostgreSQL server (TEST_POSTGRES_URL), in DIALECTS. */
  | 'postgres'
  /** The shared MySQL/MariaDB server (TEST_MYSQL_URL), in DIALECTS. */
  | 'mysql'
  /** The 3-node Galera cluster the global setup starts for the `galera` copies of the contract suites. */
  | 'shared-galera'
  /** What a private Galera cluster is made of: mariadbd, mariadb-install-db, the Galera provider, rsync. */
  | 'galera-binaries'
  /** PostgreSQL's server binaries (TEST_PG_BIN), for private clusters and a primary + standby. */
  | 'pg-binaries'
  /** redis-server (REDIS_SERVER), for a private Redis. */
  | 'redis-server'
  /** Chromium (CHROMIUM_PATH), for the browser tests. */
  | 'chromium'
  /** nginx (NGINX), for the reverse-proxy front of deploy/nginx. */
  | 'nginx'
  /** A small volume of the test's own: mounting a tmpfs (root, or a user allowed to mount). */
  | 'small-volume';

/** Why a requirement is not met: missing (a failure under CI), or left out by DIALECTS (skipped even there). */
type Unmet = { missing: string } | { leftOut: string };

/** The shared database servers, asked once per test file (only those DIALECTS selects). */
async function serverUnreachable(kind: 'postgres' | 'mysql'): Promise<string | undefined> {
  try {
    if (kind === 'postgres') await withPostgresAdmin((client) => client.query('select 1'));
    else await withMysqlAdmin((connection) => connection.query('select 1'));
    return undefined;
  } catch (error) {
    const [name, url] = kind === 'postgres' ? ['TEST_POSTGRES_URL', POSTGRES_ADMIN_URL] : ['TEST_MYSQL_URL', MYSQL_ADMIN_URL];
    return `${kind} unreachable (${name}=${url.replace(/:[^:@/]*@/, ':***@')}): ${(error as Error).message || (error as { code?: string }).code}`;
  }
}

const servers = new Map(
  await Promise.all(
    (['postgres', 'mysql'] as const).filter((kind) => STORE_KINDS.includes(kind)).map(async (kind) => [kind, await serverUnreachable(kind)] as const),
  ),
);

/** Undefined when the requirement is met here, else why not. */
function check(requirement: Requirement): Unmet | undefined {
  const missing = (reason: string | undefined) => (reason === undefined ? undefined : { missing: reason });
  switch (requirement) {
    case 'sqlite':
      return undefined;
    case 'postgres':
    case 'mysql':
      if (!STORE_KINDS.includes(requirement)) return { leftOut: `DIALECTS does not include ${requirement}` };
      return missing(servers.get(requirement));
    case 'shared-galera':
      return missing(sharedGaleraUnavailable());
    case 'galera-binaries': {
      const reason = privateGaleraUnavailable();
      return missing(reason && `a private MariaDB Galera cluster: ${reason}`);
    }
    case 'pg-binaries': {
      const reason = privatePostgresUnavailable();
      return missing(reason && `a private PostgreSQL cluster: ${reason}`);
    }
    case 'redis-server':
      return missing(redisServerMissing());
    case 'chromium':
      return missing(existsSync(CHROMIUM) ? undefined : `${CHROMIUM} (apt-get install -y chromium, or set CHROMIUM_PATH)`);
    case 'nginx':
      return missing(nginxMissing());
    case 'small-volume':
      return missing(smallVolumeMissing());
  }
}

/**
 * `describeIf(requirement, …)(title, suite)`: `describe(title, suite)` when every requirement is
 * met. Otherwise the suite is skipped with a warning saying what is missing (the first one
 * unmet), except under CI, where one failing test says it instead.
 */
export function describeIf(...requirements: [Requirement, ...Requirement[]]) {
  return (title: string, suite: () => void): void => {
    const unmet = requirements.map(check).find((reason) => reason !== undefined);
    if (unmet === undefined) {
      describe(title, suite);
    } else if ('leftOut' in unmet) {
      console.warn(`\n⚠ SKIPPING "${title}": ${unmet.leftOut}\n`);
      // Skipped on request: DIALECTS narrows the run to other stores.
      describe.skip(title, suite);
    } else if (IS_CI) {
      describe(title, () => {
        it(`needs ${unmet.missing}`, () => {
          throw new Error(`required under CI: ${unmet.missing}`);
        });
      });
    } else {
      console.warn(`\n⚠ SKIPPING "${title}": ${unmet.missing}\n`);
      // Skipped only outside CI, and loudly: the machine lacks what the suite needs.
      describe.skip(title, suite);
    }
  };
}
