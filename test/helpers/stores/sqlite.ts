// better-sqlite3 for tests that look inside a SQLite store. Like the service
// (src/store/sqlite/connection.ts), no Database or Statement object may ever be garbage-collected:
// with better-sqlite3 12 built against Node >= 24.19 headers that aborts the test process
// (nodejs/node#65446). So every one is kept for the life of the process.
import Database from 'better-sqlite3';

const NEVER_COLLECTED: unknown[] = [];

export function openSqlite(file: string, options?: Database.Options): Database.Database {
  const db = new Database(file, options);
  NEVER_COLLECTED.push(db);
  const prepare = db.prepare.bind(db);
  db.prepare = ((source: string) => {
    const statement = prepare(source);
    NEVER_COLLECTED.push(statement);
    return statement;
  }) as typeof db.prepare;
  return db;
}
