// Failed-login limit per client address: after `limit` failures within a window, every
// login attempt from that address is refused until the window passes.
//
// Every login is decided by one atomic operation at the authority that keeps the count (this
// process, the cluster primary, or Redis): a wrong password counts a failure and learns the new
// count in the same step, a correct one asks whether the address is limited. So logins that
// arrive together are answered as if one after the other: N concurrent guesses from one address
// learn at most `limit` password outcomes. A correct login takes no slot ("take a
// slot, give it back on success" would refuse concurrent correct logins behind one NAT address).

/** Seconds a refused login must wait (Retry-After), or 0 when the login may go on. */
export type RetryAfter = number;

export interface LoginLimiter {
  /**
   * The cheap check before the body is read: a limited address gets 429 whatever it sends. May
   * answer from a copy (a cluster worker's), so it never decides a login on its own.
   */
  precheck(address: string, now?: number): RetryAfter | Promise<RetryAfter>;
  /** For a correct password, asked of the authority: whether the address is limited now. */
  retryAfterSeconds(address: string, now?: number): RetryAfter | Promise<RetryAfter>;
  /**
   * For a wrong password: counts the failure at the authority and, in the same atomic step,
   * says whether it was within the limit (0: answer 401) or past it (429 after that many seconds).
   */
  countFailure(address: string, now?: number): RetryAfter | Promise<RetryAfter>;
}

/** The single-process limiter answers at once, and says until when an address is refused (for the cluster primary). */
export interface LocalLoginLimiter extends LoginLimiter {
  precheck(address: string, now?: number): RetryAfter;
  retryAfterSeconds(address: string, now?: number): RetryAfter;
  countFailure(address: string, now?: number): RetryAfter;
  /** Time (ms since the epoch) until which the address is refused, or 0 when it is not limited. */
  limitedUntil(address: string, now?: number): number;
}

interface Window {
  startedAt: number;
  failures: number;
}

const WINDOW_MS = 60_000;
/** Bounds memory under a flood of distinct addresses; the oldest windows are dropped first. */
const MAX_TRACKED_ADDRESSES = 100_000;

export function createLoginLimiter(limit: number, windowMs = WINDOW_MS): LocalLoginLimiter {
  const windows = new Map<string, Window>();

  function current(address: string, now: number): Window | undefined {
    const window = windows.get(address);
    if (window && now - window.startedAt >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return window;
  }

  function limitedUntil(address: string, now = Date.now()): number {
    if (limit === 0) return 0;
    const window = current(address, now);
    return window && window.failures >= limit ? window.startedAt + windowMs : 0;
  }

  function retryAfterSeconds(address: string, now?: number): RetryAfter {
    // No failure counted (the common case): nothing to look up, no clock to read.
    if (windows.size === 0) return 0;
    const at = now ?? Date.now();
    const until = limitedUntil(address, at);
    return until === 0 ? 0 : secondsUntil(until, at);
  }

  return {
    limitedUntil,
    precheck: retryAfterSeconds,
    retryAfterSeconds,
    // Synchronous: nothing can run between reading the count and raising it.
    countFailure(address, now = Date.now()) {
      if (limit === 0) return 0;
      let window = current(address, now);
      if (window) {
        window.failures += 1;
      } else {
        if (windows.size >= MAX_TRACKED_ADDRESSES) {
          const oldest = windows.keys().next().value;
          if (oldest !== undefined) windows.delete(oldest);
        }
        window = { startedAt: now, failures: 1 };
        windows.set(address, window);
      }
      return window.failures <= limit ? 0 : secondsUntil(window.startedAt + windowMs, now);
    },
  };
}

/** Whole seconds for Retry-After, at least 1. */
export function secondsUntil(until: number, now: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}
