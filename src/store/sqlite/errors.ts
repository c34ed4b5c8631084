// What a better-sqlite3 error means. Its `code` is SQLite's extended result code by name
// (SQLITE_BUSY, SQLITE_IOERR_WRITE, SQLITE_CONSTRAINT_NOTNULL, …).
import { errorClassifier, type StoreErrorKind } from '../errors.js';

/** The lock stayed taken past busy_timeout, the disk is full, the file cannot be opened. */
const UNAVAILABLE_CODES = new Set(['SQLITE_BUSY', 'SQLITE_LOCKED', 'SQLITE_FULL', 'SQLITE_CANTOPEN']);

export const classifySqliteError = errorClassifier(({ code }): StoreErrorKind | undefined => {
  if (typeof code !== 'string') return undefined;
  // Every I/O error (SQLITE_IOERR_WRITE, SQLITE_IOERR_FSYNC, …): the disk failed, not the query.
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return 'unavailable';
  // A WAL read snapshot that another connection's commit made stale: the transaction can be retried.
  if (code === 'SQLITE_BUSY_SNAPSHOT') return 'conflict';
  if (code.startsWith('SQLITE_CONSTRAINT')) return 'constraint';
  return undefined;
});
