// Prometheus metrics: requests by method, route pattern and status, their duration (an
// onResponse hook), the store's pool usage, the database node in use, how many GET /books
// answers were serialized (src/http/book-list.ts), with tracing on the spans that never reached
// the collector (src/tracing/dropped-spans.ts), and the default process metrics, in a registry
// of this app's own (`app.metrics`, served by src/routes/metrics.ts). METRICS=false: none of it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { BookListAnswers } from '../../http/book-list.js';
import type { FastPaths, RequestMetricsHelp, RequestRecorder } from '../../seams.js';
import type { ChangeFeed } from '../../changes/change-feed.js';
import type { BookStore } from '../../store/book-store.js';
import type { Tracing } from '../../tracing/tracing.js';

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

/** Upper bounds of the request duration buckets, in seconds. */
export const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const REQUEST_METRICS_HELP: RequestMetricsHelp = {
  requests: 'HTTP requests answered, by method, route pattern and status',
  duration: 'Time from request to response, by method, route pattern and status',
};

/** The per-request families as prom-client's own Counter and Histogram. */
export function promClientRequestMetrics(registry: Registry, buckets: readonly number[], help: RequestMetricsHelp): RequestRecorder {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: help.requests, labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: help.duration,
    labelNames,
    buckets: [...buckets],
    registers: [registry],
  });
  return {
    record(method, route, status, seconds) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      duration.observe(labels, seconds);
    },
  };
}

function createMetrics(
  store: BookStore,
  changeFeed: ChangeFeed,
  bookLists: BookListAnswers,
  tracing: Tracing,
  requestMetrics: NonNullable<FastPaths['requestMetrics']>,
): Metrics {
  // A registry per app, so several apps in one process (tests) do not share counters.
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });

  const requests = requestMetrics(registry, DURATION_BUCKETS, REQUEST_METRICS_HELP);
  storeGauge(registry, 'book_store_pool_connections', 'Store connection pool: open (total), idle, waiting queries, configured max', 'state', () => {
    const stats = store.poolStats();
    if (!stats) return [];
    const { total, idle, waiting, max } = stats;
    return [['total', total], ['idle', idle], ['in_use', total - idle], ['waiting', waiting], ['max', max]];
  });
  storeGauge(registry, 'book_store_node_in_use', 'Database hosts DB_URL lists: 1 for the one in use, 0 for the others', 'node', () => {
    const use = store.nodeUse();
    return use ? use.nodes.map((node) => [node, node === use.inUse ? 1 : 0]) : [];
  });
  let listsCounted = 0;
  new Counter({
    name: 'book_list_answers_serialized_total',
    help: 'GET /books answers serialized: one per list request, or, with the shared-lists speed path, one per group of list requests that arrived together (they share its bytes)',
    registers: [registry],
    collect() {
      this.inc(bookLists.serialized - listsCounted);
      listsCounted = bookLists.serialized;
    },
  });

  const feed = changeFeed;
  new Gauge({
    name: 'book_change_streams',
    help: 'GET /books/changes streams this process serves now',
    registers: [registry],
    collect() {
      this.set(feed.openStreams);
    },
  });
  countedFrom(registry, 'book_change_events_sent_total', 'Change events written to streams', () => feed.eventsSent);
  countedFrom(registry, 'book_change_streams_dropped_total', 'Change streams dropped because their client did not read (more than 1 MiB behind); each resumes from its cursor', () => feed.streamsDropped);

  if (tracing.enabled) {
    let droppedCounted = 0;
    new Counter({
      name: 'otel_spans_dropped_total',
      help: 'Spans of sampled traces never exported: refused because the export queue (OTEL_BSP_MAX_QUEUE_SIZE) was full, or in an export that failed or timed out',
      registers: [registry],
      collect() {
        const dropped = tracing.droppedSpans();
        this.inc(dropped - droppedCounted);
        droppedCounted = dropped;
      },
    });
  }

  return {
    registry,
    observe(request, reply) {
      // The route pattern, never the raw URL: ids would make the label set unbounded.
      requests.record(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    },
  };
}

/** A counter that follows a count kept elsewhere, read when /metrics is scraped. */
function countedFrom(registry: Registry, name: string, help: string, read: () => number) {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      this.inc(now - counted);
      counted = now;
    },
  });
}

/** A gauge read from the store when /metrics is scraped: one value per label value. */
function storeGauge(registry: Registry, name: string, help: string, label: string, read: () => [string, number][]) {
  new Gauge({
    name,
    help,
    labelNames: [label],
    registers: [registry],
    collect() {
      for (const [value, count] of read()) this.set({ [label]: value }, count);
    },
  });
}

export interface MetricsOptions {
  enabled: boolean;
  tracing: Tracing;
  /** The per-request families from a speed path (FastPaths.requestMetrics); prom-client's own unless given. */
  requestMetrics?: FastPaths['requestMetrics'];
}

export default fp<MetricsOptions>(
  async function metricsPlugin(app, { enabled, tracing, requestMetrics = promClientRequestMetrics }) {
    const metrics = enabled ? createMetrics(app.store, app.changeFeed, app.bookLists, tracing, requestMetrics) : undefined;
    app.decorate('metrics', metrics);
    if (metrics) {
      app.addHook('onResponse', (request, reply, next) => {
        metrics.observe(request, reply);
        next();
      });
    }
  },
  { name: 'metrics', dependencies: ['store', 'change-feed'] },
);
