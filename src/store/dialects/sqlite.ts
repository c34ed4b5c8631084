// SQLite through better-sqlite3: WAL, synchronous=FULL, busy timeout, bigint integers,
// and a statement cache in front of Kysely's driver.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { SqliteDialect } from 'kysely';
import { StoreStartupError } from '../startup-error.js';
import type { DialectOptions, OpenedDialect } from './common.js';

const SQLITE_BUSY_TIMEOUT_MS = 5000;

export function openSqliteDialect(file: string, options: DialectOptions): OpenedDialect {
  return { kyselyDialect: new SqliteDialect({ database: openSqlite(file, options) }), poolStats: () => undefined };
}

function openSqlite(file: string, options: DialectOptions) {
  let database: SqliteDatabase.Database;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    database = new SqliteDatabase(file);
    // WAL for concurrent readers; FULL so an acknowledged write survives power loss, not only a crash.
    if (file !== ':memory:') database.pragma('journal_mode = WAL');
    database.pragma('synchronous = FULL');
    database.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Every integer as bigint: ids above 2^53 would otherwise be rounded.
    database.defaultSafeIntegers(true);
  } catch (error) {
    throw new StoreStartupError(`cannot open SQLite store ${options.description}: ${(error as Error).message}`);
  }
  return withStatementCache(database);
}

/**
 * Kysely prepares every statement anew; better-sqlite3 statements are reusable, so keep
 * them by SQL text. Kysely's SQLite driver runs one query at a time, so a cached statement
 * is never in use twice at once. The set of SQL texts is small and fixed by the code.
 */
function withStatementCache(database: SqliteDatabase.Database) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = database.prepare(text);
        if (statements.size < 256) statements.set(text, statement);
      }
      return statement;
    },
  };
}
