// `backup FILE` for the embedded store: SQLite's online backup API copies the database while
// the service keeps writing to it (in WAL mode readers and the writer never wait for each
// other). The copy is written under a temporary name, checked (PRAGMA integrity_check),
// switched to a single file (no -wal beside it), synced, and only then renamed to FILE: FILE
// is either the previous file or a whole, checked copy, never half of one.
import { closeSync, existsSync, fsyncSync, openSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { neverCollected } from './connection.js';

/** What a backup copied. */
export interface SqliteBackup {
  file: string;
  books: number;
  bytes: number;
}

/** A backup that cannot be made or did not check out; its message names what to do. */
export class SqliteBackupError extends Error {
  override name = 'SqliteBackupError';
}

/** The most pages SQLite may copy in one step: everything (see copyPages). */
const ALL_PAGES = 0x7fffffff;
const BUSY_TIMEOUT_MS = 5_000;

/** Copies the SQLite database `sourceFile` to `destination` (replaced if it exists). */
export async function backupSqliteStore(sourceFile: string, destination: string): Promise<SqliteBackup> {
  const target = resolve(destination);
  if (!existsSync(sourceFile)) throw new SqliteBackupError(`there is no SQLite store at ${sourceFile}: check DB_URL`);
  if (!existsSync(dirname(target))) throw new SqliteBackupError(`the folder ${dirname(target)} does not exist`);
  if (isSameFileOrItsJournal(sourceFile, target)) throw new SqliteBackupError(`${destination} is the store itself: name another file`);
  const partial = `${target}.partial-${process.pid}`;
  try {
    await copyPages(sourceFile, partial);
    const books = checkCopy(partial);
    syncFile(partial);
    renameSync(partial, target);
    syncFile(dirname(target));
    return { file: target, books, bytes: statSync(target).size };
  } finally {
    rmSync(partial, { force: true });
    rmSync(`${partial}-journal`, { force: true });
  }
}

/**
 * SQLite's online backup: the first step only starts it; the second copies every page in one
 * step, inside one read transaction, so the copy is the database as of one moment, with every
 * write committed before it. A write committed by the service between those two steps makes
 * SQLite start over, again in one step.
 */
async function copyPages(sourceFile: string, partial: string): Promise<void> {
  const source = neverCollected(new SqliteDatabase(sourceFile, { readonly: true, fileMustExist: true }));
  try {
    source.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    await source.backup(partial, { progress: () => ALL_PAGES });
  } finally {
    source.close();
  }
}

/** The copy passes SQLite's integrity check and is one file in rollback-journal mode; answers its number of books. */
function checkCopy(partial: string): number {
  const copy = neverCollected(new SqliteDatabase(partial, { fileMustExist: true }));
  try {
    const problems = neverCollected(copy.prepare('PRAGMA integrity_check').pluck()).all() as string[];
    if (problems.length !== 1 || problems[0] !== 'ok') {
      throw new SqliteBackupError(`the copy failed SQLite's integrity check: ${problems.slice(0, 3).join('; ')}`);
    }
    // The source is in WAL mode and the copy says so too: make it a single, self-contained file.
    copy.exec('PRAGMA journal_mode = DELETE');
    return Number(neverCollected(copy.prepare('SELECT count(*) FROM books').pluck()).get());
  } finally {
    copy.close();
  }
}

/** Whether `target` (in a folder that exists) is the store's file or one of SQLite's files beside it, by real paths. */
function isSameFileOrItsJournal(sourceFile: string, target: string): boolean {
  const source = realpathSync(sourceFile);
  const destination = existsSync(target) ? realpathSync(target) : join(realpathSync(dirname(target)), basename(target));
  return [source, `${source}-wal`, `${source}-shm`, `${source}-journal`].includes(destination);
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

