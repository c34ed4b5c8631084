// Authentication for the routes: the token service and the built-in credentials (for
// POST /token), the failed-login limiter, and `requireToken`, the onRequest hook that protects
// the book routes. It runs before body parsing, id parsing and any store access, so
// authentication is always the first check.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Logger } from 'pino';
import fp from 'fastify-plugin';
import { bearerChallenge } from '../../auth/challenge.js';
import { createLoginLimiter, type LoginLimiter } from '../../auth/login-limiter.js';
import { createCredentialsChecker, createTokenService, type CredentialsChecker, type TokenService } from '../../auth/tokens.js';
import type { AuthSettings } from '../../config.js';
import { Messages, errorEnvelope } from '../../http/envelope.js';
import type { FastPaths } from '../../seams.js';
import type { Tracing } from '../../tracing/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    tokens: TokenService;
    credentials: CredentialsChecker;
    loginLimiter: LoginLimiter;
    /** An onRequest hook: 401 unless `Authorization` holds a valid token (raw, or with a `Bearer ` prefix). */
    requireToken: (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void;
  }
}

export interface AuthOptions {
  settings: Readonly<AuthSettings>;
  /** The failed-login limiter; made here from LOGIN_LIMIT_STORE unless given (cluster workers share one). */
  loginLimiter: LoginLimiter | undefined;
  /** With tracing on, the calls to Redis become spans of the logins they decide. */
  tracing: Tracing;
  /** A cache of verified tokens from a speed path (FastPaths.verifiedTokens); none unless given. */
  verifiedTokens?: FastPaths['verifiedTokens'];
}

/** Clients and OpenAPI tools send `Bearer <token>`; the documented form is the bare token. Both work. */
const BEARER_PREFIX = /^bearer\s+/i;

function authenticationFailure(header: string | undefined, tokens: TokenService): string | undefined {
  if (header === undefined || header.trim() === '') return Messages.tokenRequired;
  const token = BEARER_PREFIX.test(header) ? header.replace(BEARER_PREFIX, '') : header;
  return tokens.isValid(token) ? undefined : Messages.invalidToken;
}

/** Startup waits this long for Redis; past it, the service starts with the per-instance count. */
const REDIS_STARTUP_WAIT_MS = 2_000;

/** LOGIN_LIMIT_STORE: a count in this process, or one in Redis shared by every instance. */
async function createOwnLoginLimiter(app: FastifyInstance, settings: Readonly<AuthSettings>, tracing: Tracing): Promise<LoginLimiter> {
  const store = settings.loginLimitStore;
  // Off (LOGIN_RATE_LIMIT=0): the in-process limiter answers 0 at once; Redis is not even reached.
  if (store.kind === 'memory' || settings.loginRateLimit === 0) return createLoginLimiter(settings.loginRateLimit);
  // Loaded only here: the Redis client and its limiter are a fifth of the service's code.
  const { createRedisLoginLimiter } = await import('../../auth/redis-login-limiter.js');
  const shared = createRedisLoginLimiter(store.url, settings.loginRateLimit, app.log as Logger);
  app.addHook('onClose', () => shared.close());
  await shared.connected(REDIS_STARTUP_WAIT_MS);
  return tracing.traceLoginLimiter(shared, store.url);
}

export default fp<AuthOptions>(
  async function auth(app, { settings, loginLimiter, tracing, verifiedTokens }) {
    const tokens = createTokenService(settings.secret, verifiedTokens?.(), settings.verifyOnlySecrets);
    app.decorate('tokens', tokens);
    app.decorate('credentials', createCredentialsChecker(settings.username, settings.password));
    app.decorate('loginLimiter', loginLimiter ?? (await createOwnLoginLimiter(app, settings, tracing)));
    app.decorate('requireToken', function requireToken(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
      const failure = authenticationFailure(request.headers.authorization, tokens);
      if (failure === undefined) {
        done();
        return;
      }
      reply.code(401).header('www-authenticate', bearerChallenge(failure === Messages.invalidToken)).send(errorEnvelope(401, failure));
    });
  },
  { name: 'auth' },
);
