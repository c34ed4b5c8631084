// The onRequest hook that protects the book routes. It runs before body parsing, id
// parsing and any store access, so authentication is always the first check.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { Messages, errorEnvelope } from '../http/envelope.js';
import type { TokenService } from './tokens.js';

/** Clients and OpenAPI tools send `Bearer <token>`; the documented form is the bare token. Both work. */
const BEARER_PREFIX = /^bearer\s+/i;

export function authenticationFailure(header: string | undefined, tokens: TokenService): string | undefined {
  if (header === undefined || header.trim() === '') return Messages.tokenRequired;
  const token = BEARER_PREFIX.test(header) ? header.replace(BEARER_PREFIX, '') : header;
  return tokens.isValid(token) ? undefined : Messages.invalidToken;
}

export function createAuthGuard(tokens: TokenService) {
  return function requireToken(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const failure = authenticationFailure(request.headers.authorization, tokens);
    if (failure === undefined) {
      done();
      return;
    }
    reply.code(401).send(errorEnvelope(401, failure));
  };
}
