// GET /healthz (liveness: the process answers, touches nothing) and GET /readyz
// (readiness: the store answers). Public, in the envelope.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { Messages, envelope, errorEnvelope } from '../http/envelope.js';
import { HealthResponses } from '../schemas/health.js';
import { StoreUnavailableError } from '../store/errors.js';

const READY_TIMEOUT_MS = 2_000;

const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store } = app;

  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getLiveness',
        summary: 'Liveness: the process is up and answering',
        response: HealthResponses.alive,
      },
    },
    async (_request, reply) => reply.code(200).send(envelope(200, Messages.alive, { status: 'ok' })),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getReadiness',
        summary: 'Readiness: the store answers a query',
        response: HealthResponses.ready,
      },
    },
    async (request, reply) => {
      try {
        await withTimeout(store.ping(), READY_TIMEOUT_MS);
        return reply.code(200).send(envelope(200, Messages.ready, { status: 'ok' }));
      } catch (error) {
        request.log.warn({ err: error instanceof StoreUnavailableError ? error.cause : error }, 'readiness check failed');
        return reply.code(503).send(errorEnvelope(503, Messages.serviceUnavailable));
      }
    },
  );
};

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export default fp(healthRoutes, { name: 'health-routes', dependencies: ['store'] });
