// Store failures that mean "the store cannot be reached right now" (→ 503) as opposed to
// bugs (→ 500). Driver text never reaches a response body; it goes to the log only.
//
// Each database module classifies its own driver's errors (src/store/<kind>/errors.ts) with
// errorClassifier() below; the repository maps the kind onto what the HTTP side sees, in one
// place (rethrowStoreError).

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
  constructor(options: { cause: unknown }) {
    super('the book store is unavailable', options);
  }
}

/**
 * What a driver error means:
 * - 'unavailable': the store cannot be reached or is out of resources; answered 503.
 * - 'conflict': a serialization failure or deadlock (on Galera also a certification failure);
 *   the work was rolled back and may succeed when run again: the repository retries it, and
 *   answers 503 when the retries run out.
 * - 'constraint': the data broke a rule of the schema (unique, not null, foreign key); a 500,
 *   like any error that is not classified.
 */
export type StoreErrorKind = 'unavailable' | 'conflict' | 'constraint';

/** The fields the drivers set on their errors (better-sqlite3, pg, mysql2); absent ones are undefined. */
export interface DriverError extends Error {
  code?: unknown;
  errno?: unknown;
  sqlState?: unknown;
}

/**
 * A driver's error classifier from its rule for one error: the rule is also applied to the
 * errors inside an AggregateError and along the `cause` chain. 'unavailable' anywhere wins;
 * otherwise the outermost kind found.
 */
export function errorClassifier(
  classifyOne: (error: DriverError) => StoreErrorKind | undefined,
): (error: unknown) => StoreErrorKind | undefined {
  const classify = (error: unknown): StoreErrorKind | undefined => {
    if (!(error instanceof Error)) return undefined;
    const own = classifyOne(error);
    if (own === 'unavailable') return own;
    let inner: StoreErrorKind | undefined;
    if (error instanceof AggregateError) {
      for (const member of error.errors) {
        const kind = classify(member);
        if (kind === 'unavailable') return kind;
        inner ??= kind;
      }
    } else if (error.cause !== undefined && error.cause !== error) {
      inner = classify(error.cause);
      if (inner === 'unavailable') return inner;
    }
    return own ?? inner;
  };
  return classify;
}

/** Node's socket errors: the server is down, unreachable, or dropped the connection. */
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
]);

/** For the network drivers (pg, mysql2): a socket that failed or a connection attempt that timed out. */
export function isNetworkFailure(error: DriverError): boolean {
  const { code } = error;
  return (typeof code === 'string' && NETWORK_CODES.has(code)) || error.message.includes('connect ETIMEDOUT');
}

/** True when the error's message contains one of `hints` (driver errors that carry no code). */
export function hasMessageHint(error: Error, hints: readonly string[]): boolean {
  return hints.some((hint) => error.message.includes(hint));
}

/** Re-throws what `classify` calls 'unavailable' as StoreUnavailableError (503), anything else unchanged (500). */
export function rethrowStoreError(error: unknown, classify: (error: unknown) => StoreErrorKind | undefined): never {
  if (error instanceof StoreUnavailableError) throw error;
  if (classify(error) === 'unavailable') throw new StoreUnavailableError({ cause: error });
  throw error;
}

/**
 * What a log line says about a driver error: its code and message. Never the error object
 * itself: a driver's error can drag its client along (pg's: the socket, parsed statements…),
 * a 5 KB line for an outage that is expected.
 */
export function describeDriverError(error: unknown): { code: unknown; reason: string } {
  if (!(error instanceof Error)) return { code: undefined, reason: String(error) };
  return { code: (error as DriverError).code, reason: error.message };
}
