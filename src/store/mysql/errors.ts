// What a mysql2 error means: a server error has `code` (ER_…), `errno` and `sqlState`;
// mysql2's own failures have a PROTOCOL_… code, a socket's Node's code, some only a message.
import { errorClassifier, hasMessageHint, isNetworkFailure, type StoreErrorKind } from '../errors.js';

const UNAVAILABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST', // the server closed the connection
  'PROTOCOL_SEQUENCE_TIMEOUT',
  'ER_CON_COUNT_ERROR', // too many connections
]);

/**
 * 1040 too many connections, 1053 server shutdown, 1927 connection killed, and 1047: on Galera,
 * "WSREP has not yet prepared node for application use", a node outside the primary component
 * (or not synced yet) that must not be used.
 */
const UNAVAILABLE_ERRNOS = new Set([1040, 1047, 1053, 1927]);

const UNAVAILABLE_HINTS = [
  'Connection lost', // the server closed the connection
  'Pool is closed', // the store is closing
  "Can't add new command when connection is in closed state",
];

/**
 * ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT: the transaction may succeed when retried. On Galera
 * 1213 is also a certification failure: a write through another node won the same row.
 */
const CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const CONFLICT_ERRNOS = new Set([1213, 1205]);

/** ER_CHECK_CONSTRAINT_VIOLATED (MySQL; its SQLSTATE is the generic HY000). */
const CHECK_CONSTRAINT_ERRNO = 3819;

export const classifyMysqlError = errorClassifier((error): StoreErrorKind | undefined => {
  const { code, errno, sqlState } = error;
  if (
    isNetworkFailure(error) ||
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    (typeof errno === 'number' && UNAVAILABLE_ERRNOS.has(errno)) ||
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
