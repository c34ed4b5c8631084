// SQLite through better-sqlite3: WAL, synchronous=FULL, busy timeout, bigint integers,
// and a statement cache in front of Kysely's driver.
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { SqliteDialect, type CompiledQuery, type QueryResult } from 'kysely';
import { StoreStartupError } from '../startup-error.js';
import { PLUCK_MARKER, type DialectOptions, type OpenedDialect } from './common.js';

const SQLITE_BUSY_TIMEOUT_MS = 5000;
const MAX_CACHED_STATEMENTS = 256;

/**
 * better-sqlite3 12 built against Node >= 24.19 headers aborts the whole process when the
 * garbage collector finalizes one of its Database or Statement objects outside a JS context
 * (nodejs/node#65446; fixed by better-sqlite3 13, which needs Node >= 22). So none may ever
 * become garbage: they are kept here for the life of the process. That is one database and
 * a fixed, small set of statements per opened store (the SQL texts are fixed by the code).
 */
const NEVER_COLLECTED: unknown[] = [];

/**
 * Runs Kysely-compiled queries straight on better-sqlite3, synchronously. Kysely's own SQLite
 * driver puts every query behind an async mutex (each release wakes every waiter) and several
 * promise hops, which costs more than the query itself; the store uses this for its hot
 * queries and group commit, and Kysely's driver only for migrations and health checks.
 */
export interface SqliteExecutor {
  execute<R>(query: CompiledQuery<R>): QueryResult<R>;
  /** The connection itself, for group commit's transactions. */
  readonly database: SqliteDatabase.Database;
}

export function openSqliteDialect(file: string, options: DialectOptions): OpenedDialect {
  const cached = openSqlite(file, options);
  return {
    kyselyDialect: new SqliteDialect({ database: cached }),
    poolStats: () => undefined,
    sqlite: {
      database: cached.database,
      execute<R>({ sql, parameters }: CompiledQuery<R>): QueryResult<R> {
        // The same as Kysely's driver does, minus the mutex and the promises.
        const statement = cached.prepare(sql);
        if (statement.reader) return { rows: statement.all(parameters) as R[] };
        const { changes } = statement.run(parameters);
        return { rows: [], numAffectedRows: BigInt(changes) };
      },
    },
  };
}

function openSqlite(file: string, options: DialectOptions) {
  let database: SqliteDatabase.Database;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    database = new SqliteDatabase(file);
    // WAL for concurrent readers; FULL so an acknowledged write survives power loss, not only a crash.
    // exec, not pragma(): pragma() prepares a Statement that would become garbage (see
    // NEVER_COLLECTED below).
    if (file !== ':memory:') database.exec('PRAGMA journal_mode = WAL');
    database.exec('PRAGMA synchronous = FULL');
    database.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // Every integer as bigint: ids above 2^53 would otherwise be rounded.
    database.defaultSafeIntegers(true);
  } catch (error) {
    throw new StoreStartupError(`cannot open the SQLite store at ${options.description} (DB_URL): ${(error as Error).message}`);
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
  NEVER_COLLECTED.push(database, statements);
  return {
    database,
    close: () => database.close(),
    prepare(text: string) {
      let statement = statements.get(text);
      if (!statement) {
        statement = database.prepare(text);
        // A query that selects a single column and is marked so returns that column's values
        // instead of one object per row (see kysely-book-store.ts: the list page).
        if (text.endsWith(PLUCK_MARKER)) statement.pluck(true);
        if (statements.size < MAX_CACHED_STATEMENTS) statements.set(text, statement);
        else NEVER_COLLECTED.push(statement);
      }
      return statement;
    },
  };
}
