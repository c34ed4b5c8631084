// Failed-login limit per client address: after `limit` failures within a window, every
// login attempt from that address is refused until the window passes.

export interface LoginLimiter {
  /** Seconds until the address may try again, or 0 when it is not limited. */
  retryAfterSeconds(address: string, now?: number): number;
  recordFailure(address: string, now?: number): void;
}

interface Window {
  startedAt: number;
  failures: number;
}

const WINDOW_MS = 60_000;
/** Bounds memory under a flood of distinct addresses; the oldest windows are dropped first. */
const MAX_TRACKED_ADDRESSES = 100_000;

export function createLoginLimiter(limit: number, windowMs = WINDOW_MS): LoginLimiter {
  const windows = new Map<string, Window>();

  function current(address: string, now: number): Window | undefined {
    const window = windows.get(address);
    if (window && now - window.startedAt >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return window;
  }

  return {
    retryAfterSeconds(address, now = Date.now()) {
      if (limit === 0) return 0;
      const window = current(address, now);
      if (!window || window.failures < limit) return 0;
      return Math.max(1, Math.ceil((window.startedAt + windowMs - now) / 1000));
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
