// Prometheus metrics: requests by method, route pattern and status, their duration (an
// onResponse hook), the store's pool usage, the database node in use and the default process
// metrics, in a registry of this app's own (`app.metrics`, served by src/routes/metrics.ts).
// METRICS=false: none of it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BookStore } from '../../store/book-store.js';

export interface Metrics {
  registry: Registry;
  /** Counts one finished request. */
  observe(request: FastifyRequest, reply: FastifyReply): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Undefined when METRICS=false. */
    metrics: Metrics | undefined;
  }
}

function createMetrics(store: BookStore): Metrics {
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
  new Gauge({
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

  new Gauge({
    name: 'book_store_node_in_use',
    help: 'Database hosts DB_URL lists: 1 for the one in use, 0 for the others',
    labelNames: ['node'] as const,
    registers: [registry],
    collect() {
      const use = store.nodeUse();
      if (!use) return;
      for (const node of use.nodes) this.set({ node }, node === use.inUse ? 1 : 0);
    },
  });

  const buckets = (duration as unknown as { upperBounds?: unknown }).upperBounds;
  const upperBounds = Array.isArray(buckets) ? (buckets as number[]) : undefined;
  // route -> method -> status -> tally: lookups by the same strings each time, no key built per request
  const tallies = new Map<string, Map<string, Map<number, Tally>>>();

  return {
    registry,
    observe(request, reply) {
      // The route pattern, never the raw URL: ids would make the label set unbounded.
      const route = request.routeOptions.url ?? 'unmatched';
      const seconds = reply.elapsedTime / 1000;
      const tally = tallies.get(route)?.get(request.method)?.get(reply.statusCode);
      if (tally !== undefined && upperBounds !== undefined && tally.isCurrent() && Number.isFinite(seconds)) {
        tally.count.value += 1;
        const histogram = tally.histogram;
        histogram.sum += seconds;
        histogram.count += 1;
        const bound = findBound(upperBounds, seconds);
        if (Object.prototype.hasOwnProperty.call(histogram.bucketValues, bound)) histogram.bucketValues[bound] = (histogram.bucketValues[bound] as number) + 1;
        return;
      }
      const labels = { method: request.method, route, status: String(reply.statusCode) };
      requests.inc(labels);
      duration.observe(labels, seconds);
      const found = tallyOf(requests, duration, labels);
      let byMethod = tallies.get(route);
      if (!byMethod) tallies.set(route, (byMethod = new Map()));
      let byStatus = byMethod.get(request.method);
      if (!byStatus) byMethod.set(request.method, (byStatus = new Map()));
      if (found) byStatus.set(reply.statusCode, found);
      else byStatus.delete(reply.statusCode);
    },
  };
}

/**
 * The cheap path of observe(): prom-client's own entries for one label set, updated in place
 * exactly as Counter.inc() and Histogram.observe() update them (value += 1; sum, count and the
 * first bucket whose bound is >= the value, += 1), so /metrics writes the same text. The
 * library's calls validate the labels, build a hash string from them and, for the histogram,
 * a closure and two objects on every call: 4.4 % of a GET /book/:id's time in a CPU profile.
 * The first request of each label set goes through the library (which creates the entries);
 * the entries are found again by identity after a reset, and anything unexpected in the
 * library's internals keeps every request on the library's own calls.
 */
interface Tally {
  count: { value: number };
  histogram: { sum: number; count: number; bucketValues: Record<number, number> };
  /** False once the metric was reset (its entries replaced). */
  isCurrent(): boolean;
}

type WithHashMap = { hashMap?: Record<string, unknown> };

function tallyOf(counter: unknown, histogram: unknown, labels: Record<string, string>): Tally | undefined {
  const counterMap = (counter as WithHashMap).hashMap;
  const histogramMap = (histogram as WithHashMap).hashMap;
  if (!counterMap || !histogramMap) return undefined;
  const isEntry = ([, entry]: [string, unknown]) =>
    typeof entry === 'object' && entry !== null && sameLabels((entry as { labels?: Record<string, string> }).labels, labels);
  const [countKey, count] = (Object.entries(counterMap).find(isEntry) ?? []) as [string?, { value?: unknown }?];
  const [histogramKey, entry] = (Object.entries(histogramMap).find(isEntry) ?? []) as [string?, Partial<Tally['histogram']>?];
  if (countKey === undefined || histogramKey === undefined) return undefined;
  if (typeof count?.value !== 'number' || typeof entry?.sum !== 'number' || typeof entry.count !== 'number') return undefined;
  if (typeof entry.bucketValues !== 'object' || entry.bucketValues === null) return undefined;
  return {
    count: count as { value: number },
    histogram: entry as Tally['histogram'],
    isCurrent: () =>
      (counter as WithHashMap).hashMap === counterMap &&
      (histogram as WithHashMap).hashMap === histogramMap &&
      counterMap[countKey] === count &&
      histogramMap[histogramKey] === entry,
  };
}

function sameLabels(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  return a !== undefined && a.method === b.method && a.route === b.route && a.status === b.status;
}

/** prom-client's findBound: the first upper bound >= value, or -1. */
function findBound(upperBounds: readonly number[], value: number): number {
  for (const bound of upperBounds) if (value <= bound) return bound;
  return -1;
}

export default fp<{ enabled: boolean }>(
  async function metricsPlugin(app, { enabled }) {
    const metrics = enabled ? createMetrics(app.store) : undefined;
    app.decorate('metrics', metrics);
    if (metrics) {
      app.addHook('onResponse', (request, reply, next) => {
        metrics.observe(request, reply);
        next();
      });
    }
  },
  { name: 'metrics', dependencies: ['store'] },
);
