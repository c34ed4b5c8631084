// The failed-login limit across node:cluster workers (WORKERS > 1). The primary keeps the count
// and decides every login that reaches the password check: a worker asks it to count a failure
// (one round trip, answered with whether that failure was within the limit) or, for a correct
// password, whether the address is limited. The workers' own copy of the refused addresses only
// serves the check before the body: deciding a correct login from that copy would let a flood
// of guesses on another worker learn right from wrong before the limit reached this one.
// The failure that reaches the limit is answered only after every worker knows, so the next
// attempt is refused before its body whichever worker it reaches. A worker that starts (or
// restarts) later fetches the addresses limited so far before it listens.
import cluster, { type Worker } from 'node:cluster';
import { createLoginLimiter, secondsUntil, type LoginLimiter, type RetryAfter } from './login-limiter.js';

const FAILURE = 'book-service:login-failure';
const CHECK = 'book-service:login-check';
const DECIDED = 'book-service:login-decided';
const LIMITED = 'book-service:login-limited';
const LIMITED_SEEN = 'book-service:login-limited-seen';
const SYNC = 'book-service:login-limits-sync';
const SYNCED = 'book-service:login-limits';

/** A worker that does not answer within this is not waited for (it may be dying). */
const ACK_TIMEOUT_MS = 1_000;
/** A primary that does not answer within this (gone or stuck): the worker decides with its own count. */
const DECISION_TIMEOUT_MS = ACK_TIMEOUT_MS * 2;
/** Bounds the refused addresses a worker keeps; the oldest go first. */
const MAX_LIMITED_ADDRESSES = 100_000;

type Message =
  | { type: typeof FAILURE | typeof CHECK; id: number; address: string }
  /** `until`: 0 lets the login go on; otherwise it is refused until then (ms since the epoch). */
  | { type: typeof DECIDED; id: number; until: number }
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
    if (message.type !== FAILURE && message.type !== CHECK) return;
    const { id, address } = message;
    const decide = (until: number) => {
      if (worker.isConnected()) worker.send({ type: DECIDED, id, until } satisfies Message);
    };
    if (message.type === CHECK) {
      decide(limiter.limitedUntil(address, now));
      return;
    }
    const retryAfter = limiter.countFailure(address, now);
    const until = limiter.limitedUntil(address, now);
    if (retryAfter !== 0) {
      decide(until);
    } else if (until !== 0) {
      // This failure reached the limit: answered (401) once every worker refuses the address.
      limited.set(address, until);
      void tellEveryWorker(address, until).then(() => decide(0));
    } else {
      decide(0);
    }
  });
}

/**
 * In a worker: asks the primary to decide each login; refuses before the body the addresses
 * the primary says are limited. Resolves once it knows the addresses limited so far (call it
 * before listening).
 */
export async function createClusterLoginLimiter(limit: number): Promise<LoginLimiter> {
  if (limit === 0) return { precheck: () => 0, retryAfterSeconds: () => 0, countFailure: () => 0 };
  const limitedUntil = new Map<string, number>();
  const pendingDecisions = new Map<number, (until: number) => void>();
  /** Decides while the primary does not answer: this worker's own count, never unlimited. */
  const ownCount = createLoginLimiter(limit);
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
    if (message.type === DECIDED) {
      pendingDecisions.get(message.id)?.(message.until);
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

  /** One round trip: the primary's decision, or this worker's own if the primary does not answer. */
  function askPrimary(type: typeof FAILURE | typeof CHECK, address: string, decideHere: () => RetryAfter): Promise<RetryAfter> {
    return new Promise((resolve) => {
      const id = ++nextId;
      const settle = (retryAfter: RetryAfter) => {
        if (!pendingDecisions.delete(id)) return; // decided already
        clearTimeout(timer);
        resolve(retryAfter);
      };
      const decideWithoutPrimary = () => {
        if (pendingDecisions.has(id)) settle(decideHere());
      };
      const timer = setTimeout(decideWithoutPrimary, DECISION_TIMEOUT_MS);
      pendingDecisions.set(id, (until) => {
        if (until !== 0) remember(address, until);
        settle(until === 0 ? 0 : secondsUntil(until, Date.now()));
      });
      process.send?.({ type, id, address } satisfies Message, undefined, {}, (error) => error && decideWithoutPrimary());
    });
  }

  return {
    precheck(address, now = Date.now()) {
      const until = limitedUntil.get(address);
      if (until === undefined) return ownCount.precheck(address, now);
      if (now >= until) {
        limitedUntil.delete(address);
        return ownCount.precheck(address, now);
      }
      return secondsUntil(until, now);
    },
    retryAfterSeconds: (address) => askPrimary(CHECK, address, () => ownCount.retryAfterSeconds(address)),
    countFailure: (address) => askPrimary(FAILURE, address, () => ownCount.countFailure(address)),
  };
}
