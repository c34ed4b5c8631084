// SQLite through better-sqlite3: WAL, synchronous=FULL, busy timeout, bigint integers, and a
// statement cache shared by Kysely's driver and the synchronous executor.
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { makeDirectories } from '../../make-directories.js';
import type { CompiledQuery, QueryResult, SqliteDatabase as KyselySqliteDatabase } from 'kysely';
import { StoreStartupError } from '../startup-error.js';
import type { DriverOptions } from '../driver.js';

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

/** Keeps a better-sqlite3 Database or Statement made elsewhere (backup.ts) from ever being collected (see above). */
export function neverCollected<T>(object: T): T {
  NEVER_COLLECTED.push(object);
  return object;
}

/**
 * Runs Kysely-compiled queries straight on better-sqlite3, synchronously. Kysely's own SQLite
 * driver puts every query behind an async mutex (each release wakes every waiter) and several
 * promise hops, which costs more than the query itself; the store uses this for its hot
 * queries and group commit, and Kysely's driver only for migrations and health checks.
 */
export interface SqliteConnection {
  execute<R>(query: CompiledQuery<R>): QueryResult<R>;
  /** For a query that selects one column: each row is that column's value, no row objects are built. */
  executePlucked<R>(query: CompiledQuery<R>): QueryResult<R[keyof R]>;
  /** The connection itself, for group commit's transactions. */
  readonly database: SqliteDatabase.Database;
  /** The same connection behind the statement cache, for Kysely's SqliteDialect. */
  readonly forKysely: KyselySqliteDatabase;
}

export function openSqliteConnection(file: string, options: Pick<DriverOptions, 'description'>): SqliteConnection {
  const database = openDatabase(file, options);
  // Kysely prepares every statement anew; better-sqlite3 statements are reusable, so keep
  // them by SQL text. Queries run one at a time (synchronously, or behind Kysely's mutex), so
  // a cached statement is never in use twice at once.
  const statements = new Map<string, SqliteDatabase.Statement>();
  const plucked = new Map<string, SqliteDatabase.Statement>();
  NEVER_COLLECTED.push(statements, plucked);
  const prepare = (text: string) => cachedStatement(database, statements, text);
  return {
    database,
    forKysely: { close: () => database.close(), prepare },
    execute<R>({ sql, parameters }: CompiledQuery<R>): QueryResult<R> {
      // The same as Kysely's driver does, minus the mutex and the promises.
      const statement = prepare(sql);
      if (statement.reader) return { rows: statement.all(parameters) as R[] };
      const { changes } = statement.run(parameters);
      return { rows: [], numAffectedRows: BigInt(changes) };
    },
    executePlucked<R>({ sql, parameters }: CompiledQuery<R>): QueryResult<R[keyof R]> {
      return { rows: cachedStatement(database, plucked, sql, true).all(parameters) as R[keyof R][] };
    },
  };
}

function cachedStatement(
  database: SqliteDatabase.Database,
  cache: Map<string, SqliteDatabase.Statement>,
  text: string,
  pluck = false,
): SqliteDatabase.Statement {
  let statement = cache.get(text);
  if (!statement) {
    statement = database.prepare(text);
    if (pluck) statement.pluck(true);
    if (cache.size < MAX_CACHED_STATEMENTS) cache.set(text, statement);
    else NEVER_COLLECTED.push(statement);
  }
  return statement;
}

/** Per connection, in KiB: SQLite's default (2 MiB). */
const SQLITE_CACHE_KIB = 2_000;

function openDatabase(file: string, options: Pick<DriverOptions, 'description'>): SqliteDatabase.Database {
  try {
    if (file !== ':memory:') makeDirectories(dirname(file));
    const database = new SqliteDatabase(file);
    NEVER_COLLECTED.push(database);
    // WAL for concurrent readers; FULL so an acknowledged write survives power loss, not only a crash.
    // exec, not pragma(): pragma() prepares a Statement that would become garbage (see
    // NEVER_COLLECTED above).
    if (file !== ':memory:') database.exec('PRAGMA journal_mode = WAL');
    database.exec('PRAGMA synchronous = FULL');
    database.exec(`PRAGMA busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`);
    // SQLite's own page cache size: better-sqlite3 builds SQLite with 16 MiB, which writes to
    // the Idempotency-Key index fill (16 MiB of RSS); the file's pages stay in the OS's cache.
    database.exec(`PRAGMA cache_size = -${SQLITE_CACHE_KIB}`);
    // Every integer as bigint: ids above 2^53 would otherwise be rounded.
    database.defaultSafeIntegers(true);
    return database;
  } catch (error) {
    throw new StoreStartupError(`cannot open the SQLite store at ${options.description} (DB_URL): ${(error as Error).message}`);
  }
}

