// What a pg error means: a server error's `code` is its SQLSTATE; a socket error's is Node's
// (ECONNREFUSED, …); pg and pg-pool's own failures carry only a message.
import { errorClassifier, hasMessageHint, isNetworkFailure, type StoreErrorKind } from '../errors.js';

/**
 * 08xxx connection exception, 53xxx insufficient resources, 57P01-57P05 shutdown / cannot
 * connect now / idle session timeout, 57014 query canceled (statement timeout), 25006
 * read-only transaction (a standby, or a primary that was demoted: not the node to write to).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53|57P0[1-5]$|57014$|25006$)/;

/** serialization_failure, deadlock_detected: the transaction may succeed when retried. */
const CONFLICT_SQLSTATES = new Set(['40001', '40P01']);

/** duplicate_table, duplicate_object. */
const DUPLICATE_IN_CATALOG_SQLSTATES = new Set(['42P07', '42710']);

const UNAVAILABLE_HINTS = [
  'Connection terminated', // pg: the server or the network closed the connection, or connect timed out
  'timeout exceeded when trying to connect', // pg-pool: no connection within connectionTimeoutMillis
  'Query read timeout', // pg: query_timeout
  'Client has encountered a connection error', // pg: a client whose connection already failed
  'Cannot use a pool after calling end', // pg-pool: the store is closing
];

export const classifyPostgresError = errorClassifier((error): StoreErrorKind | undefined => {
  const sqlState = typeof error.code === 'string' && /^[0-9A-Z]{5}$/.test(error.code) ? error.code : undefined;
  if (
    isNetworkFailure(error) ||
    (sqlState !== undefined && UNAVAILABLE_SQLSTATE.test(sqlState)) ||
    hasMessageHint(error, UNAVAILABLE_HINTS)
  ) {
    return 'unavailable';
  }
  if (sqlState === undefined) return undefined;
  if (CONFLICT_SQLSTATES.has(sqlState)) return 'conflict';
  // Class 23, integrity constraint violation: unique, not null, foreign key, check, exclusion.
  if (sqlState.startsWith('23')) return 'constraint';
  // duplicate_table, duplicate_object: the same as a unique violation in the catalog, which
  // is what a concurrent CREATE … IF NOT EXISTS that lost the race gets (its table's row type
  // "already exists"); only the migration lease's table is ever created by instances at once.
  if (DUPLICATE_IN_CATALOG_SQLSTATES.has(sqlState)) return 'constraint';
  return undefined;
});
