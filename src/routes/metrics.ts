// GET /metrics: the app's metrics (src/plugins/app/metrics.ts) in Prometheus text format.
// Absent with METRICS=false.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';
import { MetricsResponses } from '../schemas/metrics.js';

const metricsRoute: FastifyPluginAsyncTypebox = async (app) => {
  const { metrics } = app;
  if (!metrics) return;

  app.get(
    '/metrics',
    {
      schema: {
        tags: ['operations'],
        operationId: 'getMetrics',
        summary: 'Prometheus metrics (text exposition format)',
        response: MetricsResponses,
      },
    },
    async (_request, reply) => {
      const body = await metrics.registry.metrics();
      return reply.code(200).type(metrics.registry.contentType).send(body);
    },
  );
};

export default fp(metricsRoute, { name: 'metrics-route', dependencies: ['metrics'] });
