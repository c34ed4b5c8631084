// How DB_URL names a SQLite store: one file, or a database in memory. Read at startup without
// loading better-sqlite3.
import { resolve } from 'node:path';
import type { DatabaseUrls } from '../driver.js';

export interface SqliteTarget {
  kind: 'sqlite';
  /** An absolute path, or ':memory:'. */
  file: string;
}

export const sqliteUrls: DatabaseUrls<SqliteTarget> = {
  kind: 'sqlite',
  schemes: { sqlite: 'sqlite:PATH', file: 'file:PATH' },
  parse(dbUrl, { scheme, cwd, Invalid }) {
    // sqlite:PATH, sqlite://PATH, sqlite:///abs/path, file:PATH, sqlite::memory:
    let path = dbUrl.slice(scheme.length + 1);
    if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw new Invalid(`DB_URL "${dbUrl}" names no SQLite file`);
    if (path === ':memory:') return { kind: 'sqlite', file: ':memory:' };
    return { kind: 'sqlite', file: resolve(cwd, path) };
  },
};
