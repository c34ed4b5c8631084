// The seam between the service and tracing: what the rest of the code asks of it, and
// NO_TRACING, what it gets while tracing is off (the default). startTracing()
// (start-tracing.ts) makes the real one.
//
// Nothing here imports OpenTelemetry or another module of src/tracing/: the types below are the
// service's own, and every module of tracing may import them without making a cycle.
import type { FastifyPluginCallback, FastifyReply } from 'fastify';
import type { SharedLoginLimiter } from '../auth/redis-login-limiter.js';
import type { BookStoreDriver } from '../store/driver.js';

/** Who a piece of work is done for: the trace context that was active when it was asked for. Opaque outside the tracing module. */
export type TraceContext = { readonly traceContext: unique symbol };

/**
 * The requests one batch of queries serves (one DataLoader batch, one shared GET /books
 * answer), in the order they asked. Each query of the batch runs through one of these, so
 * that its span shows in the trace of every request it serves, and only of those.
 */
export interface BatchRequests {
  /** Runs a query that serves every request of the batch. */
  all<T>(query: () => Promise<T>): Promise<T>;
  /** Runs a query that serves the requests whose place in the batch `serves` accepts. */
  some<T>(serves: (index: number) => boolean, query: () => Promise<T>): Promise<T>;
  /** Runs a query that serves the `index`th request of the batch alone. */
  one<T>(index: number, query: () => Promise<T>): Promise<T>;
}

export interface Tracing {
  /** False: every method below costs a call and nothing else. */
  readonly enabled: boolean;
  /** The Fastify plugin that makes each request's server span (registered first); undefined when off. */
  readonly httpSpans: FastifyPluginCallback | undefined;
  /** The trace context of the request being served now (to hand to a shared query); undefined when off. */
  current(): TraceContext | undefined;
  /** A response that stays open (a change stream) has started: its server span ends now, not when the stream does. */
  streamStarted(reply: FastifyReply): void;
  /** The requests a batch serves, from the contexts that asked for its parts, in order. */
  batchOf(askers: readonly (TraceContext | undefined)[]): BatchRequests;
  /** The driver with a span for each query it runs for a request. */
  traceDriver(driver: BookStoreDriver): BookStoreDriver;
  /** The Redis login limiter with a span for each call it makes for a request. */
  traceLoginLimiter(limiter: SharedLoginLimiter, redisUrl: string): SharedLoginLimiter;
  /** Spans that will never reach the collector (the queue was full, or their export failed). */
  droppedSpans(): number;
  /** Exports what is still queued (within `timeoutMs`), then stops. */
  shutdown(timeoutMs: number): Promise<void>;
}

/** Runs every query as it is: nothing to attribute. */
export const UNTRACED_BATCH: BatchRequests = {
  all: (query) => query(),
  some: (_serves, query) => query(),
  one: (_index, query) => query(),
};

export const NO_TRACING: Tracing = {
  enabled: false,
  httpSpans: undefined,
  current: () => undefined,
  streamStarted: () => undefined,
  batchOf: () => UNTRACED_BATCH,
  traceDriver: (driver) => driver,
  traceLoginLimiter: (limiter) => limiter,
  droppedSpans: () => 0,
  shutdown: async () => undefined,
};
