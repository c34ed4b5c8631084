// What a mysql2 error means: a server error has `code` (ER_…), `errno` and `sqlState`;
// mysql2's own failures have a PROTOCOL_… code, a socket's Node's code, some only a message.
import { errorClassifier, hasMessageHint, isNetworkFailure, type StoreErrorKind } from '../errors.js';

const UNAVAILABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST', // the server closed the connection
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR', // too many connections
]);

const UNAVAILABLE_HINTS = [
  'Connection lost', // the server closed the connection
  'Pool is closed', // the store is closing
  "Can't add new command when connection is in closed state",
];

/** ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT: the transaction may succeed when retried. */
const CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const CONFLICT_ERRNOS = new Set([1213, 1205]);

/** ER_CHECK_CONSTRAINT_VIOLATED (MySQL; its SQLSTATE is the generic HY000). */
const CHECK_CONSTRAINT_ERRNO = 3819;

export const classifyMysqlError = errorClassifier((error): StoreErrorKind | undefined => {
  const { code, errno, sqlState } = error;
  if (
    isNetworkFailure(error) ||
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    hasMessageHint(error, UNAVAILABLE_HINTS)
  ) {
    return 'unavailable';
  }
  if ((typeof code === 'string' && CONFLICT_CODES.has(code)) || (typeof errno === 'number' && CONFLICT_ERRNOS.has(errno))) {
    return 'conflict';
  }
  // SQLSTATE class 23: duplicate key, not null, foreign key (MariaDB's check constraints too).
  if ((typeof sqlState === 'string' && sqlState.startsWith('23')) || errno === CHECK_CONSTRAINT_ERRNO) return 'constraint';
  return undefined;
});
