// POST /token: the built-in credentials in exchange for a signed, 15-minute token.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { bearerChallenge } from '../auth/challenge.js';
import type { RetryAfter } from '../auth/login-limiter.js';
import { Messages, envelope, errorEnvelope } from '../http/envelope.js';
import { refTo } from '../schemas/shared.js';
import { LoginBody, TokenResponses } from '../schemas/token.js';

const tokenRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { tokens, credentials, loginLimiter } = app;

  const refuse = (reply: FastifyReply, retryAfter: RetryAfter) =>
    reply.header('retry-after', String(retryAfter)).code(429).send(errorEnvelope(429, Messages.tooManyRequests));

  // Runs before the body is read: a limited address gets 429 whatever it sends. Only a shortcut:
  // the handler's decision is the one that counts (logins that arrive together all pass here).
  function refuseWhileLimited(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    reply.header('cache-control', 'no-store');
    const answer = (retryAfter: RetryAfter) => {
      if (retryAfter === 0) done();
      else refuse(reply, retryAfter);
    };
    const retryAfter = loginLimiter.precheck(request.ip);
    // The in-process count (and a worker's copy) answers at once; a shared one (Redis) answers later.
    if (typeof retryAfter === 'number') answer(retryAfter);
    else retryAfter.then(answer, done);
  }

  /** Sends the login's answer (void: a handler that returned the reply would have it sent again). */
  function answerLogin(request: FastifyRequest, reply: FastifyReply, correct: boolean, retryAfter: RetryAfter): void {
    if (retryAfter !== 0) {
      refuse(reply, retryAfter);
      return;
    }
    if (!correct) {
      reply.code(401).header('www-authenticate', bearerChallenge(false)).send(errorEnvelope(401, Messages.invalidCredentials));
      return;
    }
    let token: string;
    try {
      token = tokens.issue();
    } catch (error) {
      request.log.error({ err: error }, 'token signing failed');
      reply.code(500).send(errorEnvelope(500, Messages.tokenSigningFailed));
      return;
    }
    reply.code(200).send(envelope(200, Messages.tokenGenerated, { token }));
  }

  app.post(
    '/token',
    {
      onRequest: refuseWhileLimited,
      config: { invalidBodyMessage: Messages.invalidLoginPayload },
      schema: {
        tags: ['token'],
        operationId: 'createToken',
        summary: 'Exchange the built-in credentials for a token',
        body: refTo(LoginBody),
        response: TokenResponses,
      },
    },
    (request, reply) => {
      const { username, password } = request.body;
      const correct = credentials.matches(username, password);
      // One atomic step at the authority decides: a wrong password is counted and learns its
      // place; a correct one only asks (it takes no slot). In one process both are synchronous,
      // and the answer is sent in this call, without a promise.
      const decision = correct ? loginLimiter.retryAfterSeconds(request.ip) : loginLimiter.countFailure(request.ip);
      if (typeof decision === 'number') {
        answerLogin(request, reply, correct, decision);
        return;
      }
      return decision.then((retryAfter) => answerLogin(request, reply, correct, retryAfter));
    },
  );
};

export default fp(tokenRoute, { name: 'token-route', dependencies: ['auth'] });
