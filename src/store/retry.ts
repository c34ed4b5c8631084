// Every retry of the store, as data: which errors are run again, how many times, and the pause
// before each. One runner, cockatiel's retry policy, runs them all: conflicts on every request,
// two loops at startup and two around the migration lease. A retry loop bound by a deadline
// (DB_CONNECT_TIMEOUT, DB_MIGRATION_TIMEOUT) gets it with each run (RetryRun.retryUntil).
import {
  ConstantBackoff,
  DelegateBackoff,
  ExponentialBackoff,
  fullJitterGenerator,
  handleWhen,
  retry,
  type IBackoffFactory,
  type IRetryBackoffContext,
} from 'cockatiel';
import type { StoreErrorKind } from './errors.js';

export interface RetryPolicy {
  /** What the driver's classifier (errors.ts) calls an error that is run again; any other error is the answer at once. */
  retryOn: readonly StoreErrorKind[];
  /** How many times a failed run is run again at most; Infinity where the run's deadline ends the retries instead. */
  retries: number;
  pause: Pause;
}

export type Pause =
  /**
   * Before retry n a random time below firstMs × 2^(n-1) ("full jitter"): instances that
   * collided once do not collide again in step.
   */
  | { growth: 'exponential'; firstMs: number }
  /** Before every retry `ms`, plus a random time below `jitterMs`. */
  | { growth: 'constant'; ms: number; jitterMs: number };

/**
 * A request's work rolled back by a conflict (a deadlock, a serialization failure, a Galera
 * certification failure) may succeed when run again; after the last retry the client gets a 503.
 */
export const CONFLICTS = {
  retryOn: ['conflict'],
  retries: 6,
  pause: { growth: 'exponential', firstMs: 5 },
} as const satisfies RetryPolicy;

/** Startup: the store is not up yet. Until DB_CONNECT_TIMEOUT. */
export const STORE_NOT_UP_YET = {
  retryOn: ['unavailable'],
  retries: Infinity,
  pause: { growth: 'constant', ms: 250, jitterMs: 0 },
} as const satisfies RetryPolicy;

/**
 * Startup: the migrations were cut short (a node lost, a conflict halfway). Each migration is
 * recorded once it is applied and can be applied again, so they start over. Until DB_CONNECT_TIMEOUT.
 */
export const MIGRATIONS_CUT_SHORT = {
  retryOn: ['unavailable', 'conflict'],
  retries: Infinity,
  pause: { growth: 'constant', ms: 250, jitterMs: 0 },
} as const satisfies RetryPolicy;

/**
 * The migration lease is held by another instance: taking it fails with a duplicate key, or
 * a conflict when two take it at once. Polled until DB_MIGRATION_TIMEOUT.
 */
export const LEASE_HELD = {
  retryOn: ['constraint', 'conflict'],
  retries: Infinity,
  pause: { growth: 'constant', ms: 200, jitterMs: 200 },
} as const satisfies RetryPolicy;

/**
 * Instances starting together all create the lease table (IF NOT EXISTS): PostgreSQL can then
 * fail one with a duplicate key in its catalog, Galera with a conflict.
 */
export const LEASE_TABLE_RACE = {
  retryOn: ['conflict', 'constraint'],
  retries: 4,
  pause: { growth: 'constant', ms: 0, jitterMs: 200 },
} as const satisfies RetryPolicy;

/** What one use of a policy adds to it. */
export interface RetryRun {
  /** The driver's classifier: what an error means. */
  classify: (error: unknown) => StoreErrorKind | undefined;
  /** No retry is decided at this time (Date.now()) or later: the failure is then the last. */
  retryUntil?: number;
  /** Called before the pause of each retry, with the failure and the retry's number (1 for the first). */
  onRetry?: (failure: unknown, retry: number) => void;
  /** Throws what the caller sees of the last failure (not retried, or no retries or time left); by default that failure. */
  giveUp?: (lastFailure: unknown) => never;
}

export interface Retrier {
  /** Runs `work`, and again after each failure the policy retries, pausing before each retry. */
  run<T>(work: () => Promise<T>): Promise<T>;
}

export function retrier(policy: RetryPolicy, { classify, retryUntil, onRetry, giveUp }: RetryRun): Retrier {
  const isRetried = (error: unknown) => retriesOn(policy, classify(error)) && (retryUntil === undefined || Date.now() < retryUntil);
  const retrying = retry(handleWhen(isRetried), { maxAttempts: policy.retries, backoff: backoffOf(policy.pause) });
  if (onRetry) retrying.onRetry((event) => onRetry('error' in event ? event.error : event.value, event.attempt));
  /** The policy from a first failure on: it is the outcome of the policy's first attempt, so its count and pauses are unchanged. */
  const retryAfter = async <T>(failure: unknown, work: () => Promise<T>): Promise<T> => {
    let replayed = false;
    try {
      return await retrying.execute(() => {
        if (replayed) return work();
        replayed = true;
        throw failure;
      });
    } catch (lastFailure) {
      if (giveUp) giveUp(lastFailure);
      throw lastFailure;
    }
  };
  return {
    async run<T>(work: () => Promise<T>): Promise<T> {
      // Nearly every run succeeds at once: that run is a plain call (the policy's own execute
      // costs more per call, and every request runs through here).
      try {
        return await work();
      } catch (failure) {
        return retryAfter(failure, work);
      }
    },
  };
}

/** Whether `policy` runs again what the classifier calls `kind`. */
export function retriesOn(policy: RetryPolicy, kind: StoreErrorKind | undefined): boolean {
  return kind !== undefined && policy.retryOn.includes(kind);
}

function backoffOf(pause: Pause): IBackoffFactory<IRetryBackoffContext<unknown>> {
  if (pause.growth === 'exponential') {
    return new ExponentialBackoff({ initialDelay: pause.firstMs, maxDelay: Infinity, generator: fullJitterGenerator });
  }
  if (pause.jitterMs === 0) return new ConstantBackoff(pause.ms);
  return new DelegateBackoff(() => pause.ms + Math.random() * pause.jitterMs);
}
