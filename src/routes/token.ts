// POST /token: the built-in credentials in exchange for a signed, 15-minute token.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import { Messages, envelope, errorEnvelope } from '../http/envelope.js';
import { refTo } from '../schemas/common.js';
import { LoginBody, TokenResponses } from '../schemas/token.js';

const tokenRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { tokens, credentials, loginLimiter } = app;

  // Runs before the body is read: a limited address gets 429 whatever it sends.
  function refuseWhileLimited(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    reply.header('cache-control', 'no-store');
    const answer = (retryAfter: number) => {
      if (retryAfter === 0) {
        done();
        return;
      }
      reply.header('retry-after', String(retryAfter)).code(429).send(errorEnvelope(429, Messages.tooManyRequests));
    };
    const retryAfter = loginLimiter.retryAfterSeconds(request.ip);
    // The in-process count answers at once; a shared one (Redis) answers later.
    if (typeof retryAfter === 'number') answer(retryAfter);
    else retryAfter.then(answer, done);
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
    async (request, reply) => {
      const { username, password } = request.body;
      if (!credentials.matches(username, password)) {
        // With several workers this waits until every worker knows, so the next attempt is refused anywhere.
        await loginLimiter.recordFailure(request.ip);
        return reply.code(401).send(errorEnvelope(401, Messages.invalidCredentials));
      }
      let token: string;
      try {
        token = tokens.issue();
      } catch (error) {
        request.log.error({ err: error }, 'token signing failed');
        return reply.code(500).send(errorEnvelope(500, Messages.tokenSigningFailed));
      }
      return reply.code(200).send(envelope(200, Messages.tokenGenerated, { token }));
    },
  );
};

export default fp(tokenRoute, { name: 'token-route', dependencies: ['auth'] });
