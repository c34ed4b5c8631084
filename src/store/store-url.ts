// DB_URL: which kind of store it names, and the database module for each kind. The one place
// that reads URL schemes and knows the kinds; each module is imported only when a store of its
// kind is opened, so SQLite never loads pg or mysql2.
import { resolve } from 'node:path';
import type { BookStoreDriver, DatabaseModule, DriverOptions } from './driver.js';
import { splitHosts, type DatabaseNode } from './nodes.js';

/**
 * What a PostgreSQL node must be to be used (libpq's target_session_attrs): `any` node that
 * answers, or one that accepts writes (`read-write`: not read-only; `primary`: not in recovery).
 */
export type SessionAttrs = 'any' | 'read-write' | 'primary';

export type StoreConfig =
  | { kind: 'sqlite'; file: string } // file is an absolute path or ':memory:'
  | { kind: 'postgres'; nodes: DatabaseNode[]; sessionAttrs: SessionAttrs }
  | { kind: 'mysql'; nodes: DatabaseNode[] };

type StoreKind = StoreConfig['kind'];
type StoreTarget<K extends StoreKind> = Extract<StoreConfig, { kind: K }>;

const DATABASE_MODULES: { [K in StoreKind]: () => Promise<DatabaseModule<StoreTarget<K>>> } = {
  sqlite: async () => (await import('./sqlite/index.js')).sqlite,
  postgres: async () => (await import('./postgres/index.js')).postgres,
  mysql: async () => (await import('./mysql/index.js')).mysql,
};

/** Loads the target's database module and opens it. */
export async function openDriver<K extends StoreKind>(target: StoreTarget<K>, options: DriverOptions): Promise<BookStoreDriver> {
  const module = await DATABASE_MODULES[target.kind as K]();
  return module.open(target, options);
}

/**
 * Maps DB_URL onto a store. Any scheme other than the documented ones refuses to start:
 * throws `Invalid` (config.ts passes its ConfigError) naming DB_URL.
 */
export function parseStoreUrl(dbUrl: string, cwd: string, Invalid: new (message: string) => Error = Error): StoreConfig {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(dbUrl)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'sqlite':
    case 'file': {
      // sqlite:PATH, sqlite://PATH, sqlite:///abs/path, file:PATH, sqlite::memory:
      let path = dbUrl.slice(scheme.length + 1);
      if (path.startsWith('//')) path = path.slice(2);
      if (path === '') throw new Invalid(`DB_URL "${dbUrl}" names no SQLite file`);
      if (path === ':memory:') return { kind: 'sqlite', file: ':memory:' };
      return { kind: 'sqlite', file: resolve(cwd, path) };
    }
    case 'postgres':
    case 'postgresql': {
      // pg knows neither several hosts nor target_session_attrs: the postgres module does both.
      const { url, sessionAttrs } = takeSessionAttrs(dbUrl, Invalid);
      return { kind: 'postgres', nodes: splitHosts(url, 5432, Invalid), sessionAttrs };
    }
    case 'mysql':
    case 'mariadb':
      return { kind: 'mysql', nodes: splitHosts(dbUrl.replace(/^mariadb:/i, 'mysql:'), 3306, Invalid) };
    default:
      throw new Invalid(
        `DB_URL has an unsupported scheme "${scheme ?? dbUrl}": use sqlite:PATH, file:PATH, ` +
          'postgres://…, postgresql://…, mysql://… or mariadb://…',
      );
  }
}

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

/** The store URL with its password replaced, for logs and error messages. */
export function describeStoreUrl(dbUrl: string): string {
  return dbUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
