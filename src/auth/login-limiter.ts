// Failed-login limit per client address: after `limit` failures within a window, every
// login attempt from that address is refused until the window passes.

export interface LoginLimiter {
  /** Seconds until the address may try again, or 0 when it is not limited (a shared count answers later). */
  retryAfterSeconds(address: string, now?: number): number | Promise<number>;
  /** Counts a failed login; once it has resolved, every later check sees it. */
  recordFailure(address: string, now?: number): void | Promise<void>;
}

/** The single-process limiter also says until when an address is refused (for the cluster primary). */
export interface LocalLoginLimiter extends LoginLimiter {
  retryAfterSeconds(address: string, now?: number): number;
  /** Time (ms since the epoch) until which the address is refused, or 0 when it is not limited. */
  limitedUntil(address: string, now?: number): number;
  recordFailure(address: string, now?: number): void;
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

  return {
    limitedUntil,
    retryAfterSeconds(address, now = Date.now()) {
      const until = limitedUntil(address, now);
      return until === 0 ? 0 : secondsUntil(until, now);
    },
    recordFailure(address, now = Date.now()) {
      if (limit === 0) return;
      const window = current(address, now);
      if (window) {
        window.failures += 1;
        return;
      }
      if (windows.size >= MAX_TRACKED_ADDRESSES) {
        const oldest = windows.keys().next().value;
        if (oldest !== undefined) windows.delete(oldest);
      }
      windows.set(address, { startedAt: now, failures: 1 });
    },
  };
}

/** Whole seconds for Retry-After, at least 1. */
export function secondsUntil(until: number, now: number): number {
  return Math.max(1, Math.ceil((until - now) / 1000));
}
