// The failed-login limit shared by every instance (LOGIN_LIMIT_STORE=redis://…): one count per
// client address in Redis, with the same rules as the in-process limiter (a fixed one-minute
// window from the first failure; at the limit, every login from that address is refused until
// the window ends). While Redis is unreachable, each instance counts on its own (never
// unlimited, never a 500), and the shared count resumes when Redis is back.
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { LoginLimiter, RetryAfter } from './login-limiter.js';

const WINDOW_SECONDS = 60;
const KEY_PREFIX = 'book-service:failed-logins';
/** A Redis call that takes longer counts as Redis being down for that login. */
const COMMAND_TIMEOUT_MS = 500;

export interface SharedLoginLimiter extends LoginLimiter {
  /** Resolves once Redis answers, or after `timeoutMs` (then the fallback counts meanwhile). */
  connected(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** `limit` is at least 1 (with 0 the limit is off and needs no Redis). */
export function createRedisLoginLimiter(url: string, limit: number, logger: Logger): SharedLoginLimiter {
  const redis = new Redis(url, {
    // Fail a command at once while disconnected, so the per-instance count takes over.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 250, 2_000), // keep reconnecting, forever
  });
  watchConnection(redis, logger);
  const options = { points: limit, duration: WINDOW_SECONDS };
  const limiter = new RateLimiterRedis({
    storeClient: redis,
    keyPrefix: KEY_PREFIX,
    ...options,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: KEY_PREFIX, ...options }),
  });

  /** Seconds until the window ends, from a state Redis (or the fallback) returned. */
  const waitOf = (state: RateLimiterRes) => Math.max(1, Math.ceil(state.msBeforeNext / 1000));

  async function retryAfterSeconds(address: string): Promise<RetryAfter> {
    const state = await limiter.get(address);
    return state === null || state.consumedPoints < limit ? 0 : waitOf(state);
  }

  return {
    precheck: retryAfterSeconds,
    retryAfterSeconds,
    // `consume` is one atomic INCR (a Lua script that also starts the window): the count it
    // returns is this failure's own place, whatever other instances do meanwhile.
    async countFailure(address) {
      let state: RateLimiterRes;
      try {
        state = await limiter.consume(address);
      } catch (outcome) {
        // Rejected with the limiter's state once past the limit: the failure is counted all the same.
        if (!(outcome instanceof RateLimiterRes)) throw outcome;
        state = outcome;
      }
      return state.consumedPoints <= limit ? 0 : waitOf(state);
    },
    async connected(timeoutMs) {
      if (redis.status === 'ready') return true;
      let timer: NodeJS.Timeout | undefined;
      const ready = new Promise<boolean>((resolve) => redis.once('ready', () => resolve(true)));
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
      return Promise.race([ready, late]).finally(() => clearTimeout(timer));
    },
    async close() {
      redis.disconnect();
    },
  };
}

/** One warning when Redis goes away, one line when it is back; never the URL (it may hold a password). */
function watchConnection(redis: Redis, logger: Logger) {
  let down = false;
  redis.on('error', (error: Error & { code?: string }) => {
    if (down) return;
    down = true;
    logger.warn({ code: error.code ?? error.name }, 'LOGIN_LIMIT_STORE unreachable: failed logins are counted per instance until it is back');
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.info('LOGIN_LIMIT_STORE reachable again: failed logins are counted for all instances');
  });
}
