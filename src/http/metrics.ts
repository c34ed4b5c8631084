// GET /metrics in Prometheus text format: requests by method, route pattern and status,
// their duration, the store's pool usage and the default process metrics.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { MetricsResponses } from '../books/schemas.js';
import type { BookStore } from '../store/book-store.js';
import type { App, ResponseObserver } from './types.js';

/** Registers GET /metrics; returns the observer to call once per finished request. */
export function registerMetrics(app: App, store: BookStore): ResponseObserver {
  // A registry per app, so several apps in one process (tests) do not share counters.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response, by method, route pattern and status',
    labelNames,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const pool = new Gauge({
    name: 'book_store_pool_connections',
    help: 'Store connection pool: open (total), idle, waiting queries, configured max',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const stats = store.poolStats();
      if (!stats) return;
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'in_use' }, stats.total - stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
      this.set({ state: 'max' }, stats.max);
    },
  });
  void pool;

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
      const body = await registry.metrics();
      return reply.code(200).type(registry.contentType).send(body);
    },
  );

  return (request, reply) => {
    // The route pattern, never the raw URL: ids would make the label set unbounded.
    const route = request.routeOptions.url ?? 'unmatched';
    const labels = { method: request.method, route, status: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  };
}
