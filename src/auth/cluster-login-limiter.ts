// The failed-login limit across node:cluster workers (WORKERS > 1). The primary counts every
// worker's failures; workers only keep the addresses that are refused, so the check on each
// login stays a local lookup. A failure is acknowledged to its worker, and so answered 401,
// only after every worker knows about a limit it caused: the next attempt is refused whichever
// worker it reaches, exactly as in one process. A worker that starts (or restarts) later
// fetches the addresses limited so far before it listens.
import cluster, { type Worker } from 'node:cluster';
import { createLoginLimiter, secondsUntil, type LoginLimiter } from './login-limiter.js';

const FAILURE = 'book-service:login-failure';
const RECORDED = 'book-service:login-failure-recorded';
const LIMITED = 'book-service:login-limited';
const LIMITED_SEEN = 'book-service:login-limited-seen';
const SYNC = 'book-service:login-limits-sync';
const SYNCED = 'book-service:login-limits';

/** A worker that does not answer within this is not waited for (it may be dying). */
const ACK_TIMEOUT_MS = 1_000;
/** Bounds the refused addresses a worker keeps; the oldest go first. */
const MAX_LIMITED_ADDRESSES = 100_000;

type Message =
  | { type: typeof FAILURE; id: number; address: string }
  | { type: typeof RECORDED; id: number }
  | { type: typeof LIMITED; id: number; address: string; until: number }
  | { type: typeof LIMITED_SEEN; id: number }
  | { type: typeof SYNC }
  | { type: typeof SYNCED; limited: [address: string, until: number][] };

function isMessage(value: unknown): value is Message {
  return typeof value === 'object' && value !== null && typeof (value as { type?: unknown }).type === 'string';
}

/** In the primary: counts the workers' failed logins and tells every worker when an address is limited. */
export function serveLoginLimitToWorkers(limit: number): void {
  const limiter = createLoginLimiter(limit);
  /** Addresses limited so far and until when, for workers that start later. */
  const limited = new Map<string, number>();
  const pendingAcks = new Map<number, () => void>();
  let nextId = 0;

  /** Sends LIMITED to every live worker; resolves when all have confirmed (or timed out). */
  function tellEveryWorker(address: string, until: number): Promise<void> {
    const workers = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker?.isConnected() === true);
    return Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            const id = ++nextId;
            const timer = setTimeout(() => done(), ACK_TIMEOUT_MS);
            const done = () => {
              clearTimeout(timer);
              pendingAcks.delete(id);
              resolve();
            };
            pendingAcks.set(id, done);
            worker.send({ type: LIMITED, id, address, until } satisfies Message, (error) => error && done());
          }),
      ),
    ).then(() => undefined);
  }

  cluster.on('message', (worker, message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === LIMITED_SEEN) {
      pendingAcks.get(message.id)?.();
      return;
    }
    const now = Date.now();
    if (message.type === SYNC) {
      for (const [address, until] of limited) if (until <= now) limited.delete(address);
      worker.send({ type: SYNCED, limited: [...limited] } satisfies Message);
      return;
    }
    if (message.type !== FAILURE) return;
    const wasLimited = limiter.limitedUntil(message.address, now) !== 0;
    limiter.recordFailure(message.address, now);
    const until = limiter.limitedUntil(message.address, now);
    const recorded = () => {
      if (worker.isConnected()) worker.send({ type: RECORDED, id: message.id } satisfies Message);
    };
    if (until !== 0 && !wasLimited) {
      limited.set(message.address, until);
      void tellEveryWorker(message.address, until).then(recorded);
    } else recorded();
  });
}

/**
 * In a worker: refuses the addresses the primary says are limited; reports failures to it.
 * Resolves once it knows the addresses limited so far (call it before listening).
 */
export async function createClusterLoginLimiter(limit: number): Promise<LoginLimiter> {
  if (limit === 0) return { retryAfterSeconds: () => 0, recordFailure: () => undefined };
  const limitedUntil = new Map<string, number>();
  const pendingFailures = new Map<number, () => void>();
  let nextId = 0;
  let synced: () => void = () => undefined;

  const remember = (address: string, until: number) => {
    if (limitedUntil.size >= MAX_LIMITED_ADDRESSES) {
      const oldest = limitedUntil.keys().next().value;
      if (oldest !== undefined) limitedUntil.delete(oldest);
    }
    limitedUntil.set(address, until);
  };

  process.on('message', (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === RECORDED) {
      pendingFailures.get(message.id)?.();
    } else if (message.type === LIMITED) {
      remember(message.address, message.until);
      process.send?.({ type: LIMITED_SEEN, id: message.id } satisfies Message);
    } else if (message.type === SYNCED) {
      for (const [address, until] of message.limited) remember(address, until);
      synced();
    }
  });

  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ACK_TIMEOUT_MS * 2);
    synced = () => {
      clearTimeout(timer);
      resolve();
    };
    process.send?.({ type: SYNC } satisfies Message);
  });

  return {
    retryAfterSeconds(address, now = Date.now()) {
      const until = limitedUntil.get(address);
      if (until === undefined) return 0;
      if (now >= until) {
        limitedUntil.delete(address);
        return 0;
      }
      return secondsUntil(until, now);
    },
    recordFailure(address) {
      return new Promise<void>((resolve) => {
        const id = ++nextId;
        // Without an answer from the primary (it is gone or stuck) the 401 still goes out.
        const timer = setTimeout(() => done(), ACK_TIMEOUT_MS * 2);
        const done = () => {
          clearTimeout(timer);
          pendingFailures.delete(id);
          resolve();
        };
        pendingFailures.set(id, done);
        process.send?.({ type: FAILURE, id, address } satisfies Message, undefined, {}, (error) => error && done());
      });
    },
  };
}
