// `backup FILE`: a consistent copy of the embedded SQLite store, made while the service keeps
// serving (src/store/sqlite/backup.ts). A server store is backed up with its own tools
// (docs/operations.md "Backup and restore"). Needs no SECRET_TOKEN: it signs nothing, and the
// secret file beside the store is not copied (a backup never holds a secret).
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { StartupError } from '../startup-error.js';

const SERVER_STORE_TOOLS = 'back up PostgreSQL with pg_dump and MySQL or MariaDB with mariadb-dump (docs/operations.md "Backup and restore")';

export async function backup(file: string) {
  const config = loadConfig(process.env, process.cwd(), { requireSecret: false });
  const { target, description } = config.store;
  if (target.kind !== 'sqlite') throw new StartupError(`backup copies the embedded SQLite store, and DB_URL is ${description}: ${SERVER_STORE_TOOLS}`);
  if (target.file === ':memory:') throw new StartupError('backup copies a SQLite file, and DB_URL names a database in memory, which no other process can read');
  const logger = createLogger(config.logLevel);
  // Loaded only here: better-sqlite3 is not needed by a server store's commands.
  const { backupSqliteStore, SqliteBackupError } = await import('../store/sqlite/backup.js');
  const started = Date.now();
  try {
    const copy = await backupSqliteStore(target.file, file);
    logger.info({ store: description, file: copy.file, books: copy.books, bytes: copy.bytes, ms: Date.now() - started }, 'backup written and checked');
    logger.flush();
  } catch (error) {
    if (error instanceof SqliteBackupError) throw new StartupError(error.message);
    throw error;
  }
}
