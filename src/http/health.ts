// GET /healthz (liveness: the process answers, touches nothing) and GET /readyz
// (readiness: the store answers). Public, in the envelope.
import { Type } from 'typebox';
import { Envelope, ErrorAnswer } from '../books/schemas.js';
import type { BookStore } from '../store/book-store.js';
import { StoreUnavailableError } from '../store/errors.js';
import { Messages, envelope, errorEnvelope } from './envelope.js';
import type { App } from './types.js';

const HealthData = Type.Object({ status: Type.String({ enum: ['ok'] }) }, { additionalProperties: false });
const READY_TIMEOUT_MS = 2_000;

export function registerHealthRoutes(app: App, store: BookStore) {
  app.get(
    '/healthz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process is up and answering',
        response: { 200: Envelope(HealthData, 'Alive') },
      },
    },
    async (_request, reply) => reply.code(200).send(envelope(200, Messages.alive, { status: 'ok' })),
  );

  app.get(
    '/readyz',
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the store answers a query',
        response: {
          200: Envelope(HealthData, 'Ready to serve'),
          503: ErrorAnswer(503, [Messages.serviceUnavailable], 'The store does not answer'),
        },
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
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
