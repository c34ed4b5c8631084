// What a mysql2 error means: a server error has `code` (ER_…), `errno` and `sqlState`;
// mysql2's own failures have a PROTOCOL_… code, a socket's Node's code, some only a message.
import { errorClassifier, hasMessageHint, isNetworkFailure, type StoreErrorKind } from '../errors.js';

const UNAVAILABLE_CODES = new Set([
  'PROTOCOL_CONNECTION_LOST', // the server closed the connection
  'PROTOCOL_SEQUENCE_TIMEOUT', // the client's own limit: the server did not answer in time
  'ER_CON_COUNT_ERROR', // too many connections
]);

/**
 * 1040 too many connections, 1053 server shutdown, 1927 connection killed, and 1047: on Galera,
 * "WSREP has not yet prepared node for application use", a node outside the primary component
 * (or not synced yet) that must not be used.
 */
const UNAVAILABLE_ERRNOS = new Set([1040, 1047, 1053, 1927]);

/**
 * The server stopped the statement at its time limit and rolled it back: 1969 MariaDB's
 * max_statement_time, 3024 MySQL's max_execution_time, 1205 a row lock waited for past
 * innodb_lock_wait_timeout, and 1317 query interrupted. The node is fine (a lock held by
 * someone else is not its fault); the request gets a 503 and nothing of it was applied.
 */
const STATEMENT_TIMEOUT_ERRNOS = new Set([1969, 3024, 1205, 1317]);

/** No pooled connection became free within DB_QUERY_TIMEOUT: every one is busy. */
export class PoolWaitTimeoutError extends Error {
  override name = 'PoolWaitTimeoutError';
  constructor(waitedMs: number) {
    super(`no MySQL connection became free within ${waitedMs} ms (DB_QUERY_TIMEOUT)`);
  }
}

/** A query asked of a connection that was given up on (the server did not answer in time). */
export class NoAnswerError extends Error {
  override name = 'NoAnswerError';
  constructor(node: string) {
    super(`MySQL node ${node} did not answer in time; the connection was closed`);
  }
}

/** A new connection on which the session settings (time limit, causal reads) could not be set. */
export class SessionSetupError extends Error {
  override name = 'SessionSetupError';
  constructor(node: string, options: { cause: unknown }) {
    super(`cannot set up a session on MySQL node ${node}`, options);
  }
}

/** The server stopped a statement at its time limit (rolled back); not a sign the node is gone. */
export function isMysqlStatementTimeout(error: unknown): boolean {
  const errno = (error as { errno?: unknown } | undefined)?.errno;
  return typeof errno === 'number' && STATEMENT_TIMEOUT_ERRNOS.has(errno);
}

/** An error the server sent (it has the server's SQLSTATE), as opposed to a timeout or a lost socket. */
export function isServerAnswer(error: unknown): boolean {
  return typeof (error as { sqlState?: unknown }).sqlState === 'string' && typeof (error as { errno?: unknown }).errno === 'number';
}

/**
 * The server answered the statement with an error that says it was rolled back, nothing of it
 * applied (a value it cannot store, a syntax it does not know): not a lost connection or a
 * client timeout, after which it may still commit; not a conflict or a statement timeout,
 * which are retried or answered 503 as they are.
 */
export function isRefusedStatement(error: unknown): boolean {
  const kind = classifyMysqlError(error);
  return isServerAnswer(error) && kind !== 'unavailable' && kind !== 'conflict';
}

const UNAVAILABLE_HINTS = [
  'Connection lost', // the server closed the connection
  'Pool is closed', // the store is closing
  "Can't add new command when connection is in closed state",
];

/**
 * ER_LOCK_DEADLOCK: the transaction was rolled back and may succeed when retried. On Galera
 * it is also a certification failure: a write through another node won the same row. (A lock
 * wait timeout is not retried: it already waited DB_QUERY_TIMEOUT.)
 */
const CONFLICT_CODES = new Set(['ER_LOCK_DEADLOCK']);
const CONFLICT_ERRNOS = new Set([1213]);

/** ER_CHECK_CONSTRAINT_VIOLATED (MySQL; its SQLSTATE is the generic HY000). */
const CHECK_CONSTRAINT_ERRNO = 3819;

export const classifyMysqlError = errorClassifier((error): StoreErrorKind | undefined => {
  const { code, errno, sqlState } = error;
  if (
    isNetworkFailure(error) ||
    (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) ||
    (typeof errno === 'number' && (UNAVAILABLE_ERRNOS.has(errno) || STATEMENT_TIMEOUT_ERRNOS.has(errno))) ||
    error instanceof PoolWaitTimeoutError ||
    error instanceof NoAnswerError ||
    error instanceof SessionSetupError ||
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
