// The shared failed-login limit's calls to Redis (LOGIN_LIMIT_STORE=redis://…) as spans of the
// login they decide: `GET` for a check (the count and its time to live, read in one MULTI),
// `EVALSHA` for a failure counted (the limiter's script: start the window, add one, read the
// time to live). Never the key: it holds the client's address; never the URL's credentials.
import type { Attributes } from '@opentelemetry/api';
import { ATTR_DB_OPERATION_NAME, ATTR_DB_SYSTEM_NAME, ATTR_SERVER_ADDRESS, ATTR_SERVER_PORT } from '@opentelemetry/semantic-conventions';
import type { SharedLoginLimiter } from '../auth/redis-login-limiter.js';
import type { WorkSpans } from './work-spans.js';

export function traceLoginLimiter(limiter: SharedLoginLimiter, redisUrl: string, spans: WorkSpans): SharedLoginLimiter {
  const { hostname, port } = new URL(redisUrl);
  const server: Attributes = {
    [ATTR_DB_SYSTEM_NAME]: 'redis',
    'db.system': 'redis',
    [ATTR_SERVER_ADDRESS]: hostname.replace(/^\[(.*)\]$/, '$1'),
    [ATTR_SERVER_PORT]: port === '' ? 6379 : Number(port),
  };
  const read: Attributes = { ...server, [ATTR_DB_OPERATION_NAME]: 'GET' };
  const count: Attributes = { ...server, [ATTR_DB_OPERATION_NAME]: 'EVALSHA' };
  return {
    ...limiter,
    precheck: (address) => spans.run('GET', read, async () => limiter.precheck(address)),
    retryAfterSeconds: (address) => spans.run('GET', read, async () => limiter.retryAfterSeconds(address)),
    countFailure: (address) => spans.run('EVALSHA', count, async () => limiter.countFailure(address)),
  };
}
