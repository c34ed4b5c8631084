// How DB_URL names a PostgreSQL store: the hosts it lists and what a node must be to be used
// (target_session_attrs). Read at startup without loading pg.
import type { DatabaseUrls } from '../driver.js';
import { splitHosts, type DatabaseNode } from '../nodes.js';

/**
 * What a PostgreSQL node must be to be used (libpq's target_session_attrs): `any` node that
 * answers, or one that accepts writes (`read-write`: not read-only; `primary`: not in recovery).
 */
export type SessionAttrs = 'any' | 'read-write' | 'primary';

export interface PostgresTarget {
  kind: 'postgres';
  nodes: DatabaseNode[];
  sessionAttrs: SessionAttrs;
}

export const postgresUrls: DatabaseUrls<PostgresTarget> = {
  kind: 'postgres',
  schemes: { postgres: 'postgres://…', postgresql: 'postgresql://…' },
  parse(dbUrl, { Invalid }) {
    // pg knows neither several hosts nor target_session_attrs: the postgres module does both.
    const { url, sessionAttrs } = takeSessionAttrs(dbUrl, Invalid);
    return { kind: 'postgres', nodes: splitHosts(url, 5432, Invalid), sessionAttrs };
  },
};

const SESSION_ATTRS: readonly string[] = ['any', 'read-write', 'primary'] satisfies SessionAttrs[];

/** Removes target_session_attrs from a PostgreSQL URL and returns its value (default `any`). */
function takeSessionAttrs(dbUrl: string, Invalid: new (message: string) => Error): { url: string; sessionAttrs: SessionAttrs } {
  let sessionAttrs: SessionAttrs = 'any';
  const url = dbUrl.replace(/([?&])target_session_attrs=([^&#]*)&?/, (_whole, separator: string, value: string) => {
    const wanted = decodeURIComponent(value);
    if (!SESSION_ATTRS.includes(wanted)) {
      throw new Invalid(`DB_URL target_session_attrs "${wanted}" is not supported: use read-write, primary or any`);
    }
    sessionAttrs = wanted as SessionAttrs;
    return separator;
  });
  return { url: url.replace(/[?&]$/, ''), sessionAttrs };
}
