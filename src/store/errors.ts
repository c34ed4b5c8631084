// Store failures that mean "the store cannot be reached right now" (→ 503) as opposed to
// bugs (→ 500). Driver text never reaches a response body; it goes to the log only.

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(options: { cause: unknown }) {
    super('the book store is unavailable', options);
  }
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNABORTED',
  'PROTOCOL_CONNECTION_LOST', // mysql2
  'PROTOCOL_SEQUENCE_TIMEOUT', // mysql2
  'ER_CON_COUNT_ERROR', // mysql: too many connections
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
]);

// PostgreSQL SQLSTATEs: 08xxx connection exception, 53xxx insufficient resources,
// 57P01-57P05 shutdown / cannot connect now / idle session timeout, 40001/40P01 retry-able.
const PG_UNAVAILABLE = /^(08|53|57P0[1-5]$|57014$)/;

const MESSAGE_HINTS = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Client has encountered a connection error',
  'Connection lost',
  'connect ETIMEDOUT',
  'Pool is closed',
  'Cannot use a pool after calling end',
  'Can\'t add new command when connection is in closed state',
];

export function isStoreUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const { code } = error as { code?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || code.startsWith('SQLITE_IOERR')) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && PG_UNAVAILABLE.test(code)) return true;
  }
  if (MESSAGE_HINTS.some((hint) => error.message.includes(hint))) return true;
  if (error instanceof AggregateError) return error.errors.some(isStoreUnavailable);
  return error.cause !== undefined && error.cause !== error && isStoreUnavailable(error.cause);
}

/** Re-throws connection-level failures as StoreUnavailableError, anything else unchanged. */
export function classifyStoreError(error: unknown): never {
  if (error instanceof StoreUnavailableError) throw error;
  if (isStoreUnavailable(error)) throw new StoreUnavailableError({ cause: error });
  throw error;
}
