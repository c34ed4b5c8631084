// Tracing on: OpenTelemetry's SDK put together from the settings (src/tracing/tracing-config.ts).
// Loaded only by startTracing() (src/tracing/start-tracing.ts), and only when OTEL_* variables turn
// tracing on: this module and everything it imports is a chunk of its own in dist/.
//
// Nothing is registered globally (no global tracer provider, context manager or propagator):
// each running server has its own, so two in one process (the tests) never mix their traces.
//
// An unreachable collector never slows a request: a span that ends is only queued (a bounded
// queue, OTEL_BSP_MAX_QUEUE_SIZE); exports run in the background, one batch at a time, each
// bounded (OTEL_EXPORTER_OTLP_TIMEOUT); what cannot be queued or exported is counted
// (dropped-spans.ts) and shown in /metrics as otel_spans_dropped_total.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { ROOT_CONTEXT, type Context, type TextMapPropagator } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { CompressionAlgorithm } from '@opentelemetry/otlp-exporter-base';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { VERSION } from '../version.js';
import { DroppedSpans } from './dropped-spans.js';
import { endSpanAtStreamStart, httpSpans } from './http-spans.js';
import { traceLoginLimiter } from './login-limit-spans.js';
import { traceDriver } from './store-spans.js';
import type { TracingSettings } from './tracing-config.js';
import type { TraceContext, Tracing } from './tracing.js';
import { WorkSpans } from './work-spans.js';

/** The instrumentation scope every span carries. */
const SCOPE = 'book-service';

export function openTelemetryTracing(settings: Readonly<TracingSettings>, logger: Logger): Tracing {
  const dropped = new DroppedSpans(settings.batch.maxQueueSize, (failing, error) => {
    // One line when exports start failing, one when they work again: never a line per export.
    if (failing) logger.warn({ endpoint: settings.exporter.description, code: errorCode(error) }, 'OTLP export failed: spans are dropped until the collector answers');
    else logger.info({ endpoint: settings.exporter.description }, 'OTLP export works again');
  });
  const processor = dropped.bounding(
    new BatchSpanProcessor(dropped.counting(exporterFor(settings.exporter)), {
      maxQueueSize: settings.batch.maxQueueSize,
      maxExportBatchSize: settings.batch.maxExportBatchSize,
      scheduledDelayMillis: settings.batch.scheduleDelayMs,
      exportTimeoutMillis: settings.batch.exportTimeoutMs,
    }),
  );
  const provider = new BasicTracerProvider({
    resource: defaultResource().merge(
      resourceFromAttributes({
        // Which process of which machine served a request: "on which node was it slow".
        'service.instance.id': randomUUID(),
        'host.name': hostname(),
        'process.pid': process.pid,
        [ATTR_SERVICE_VERSION]: VERSION,
        ...settings.resourceAttributes,
        [ATTR_SERVICE_NAME]: settings.serviceName,
      }),
    ),
    sampler: samplerFor(settings.sampler),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer(SCOPE, VERSION);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const work = new WorkSpans(tracer, contexts);
  logger.info(
    { endpoint: settings.exporter.description, protocol: settings.exporter.protocol, sampler: settings.sampler.name, service: settings.serviceName },
    'tracing on: spans are exported over OTLP',
  );

  return {
    enabled: true,
    httpSpans: httpSpans(tracer, contexts, propagatorFor(settings.propagators)),
    current: () => contexts.active() as unknown as TraceContext,
    streamStarted: endSpanAtStreamStart,
    batchOf: (askers) => work.batchOf(askers as unknown as readonly (Context | undefined)[]),
    traceDriver: (driver) => traceDriver(driver, work),
    traceLoginLimiter: (limiter, redisUrl) => traceLoginLimiter(limiter, redisUrl, work),
    droppedSpans: () => dropped.count,
    async shutdown(timeoutMs) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
      const flushed = provider.shutdown().then(
        () => 'flushed' as const,
        () => 'failed' as const,
      );
      const outcome = await Promise.race([flushed, late]).finally(() => clearTimeout(timer));
      if (outcome !== 'flushed') logger.warn({ endpoint: settings.exporter.description, outcome }, 'spans still queued at shutdown were not all exported');
      contexts.disable();
    },
  };
}

function exporterFor({ url, protocol, headers, timeoutMs, compression }: TracingSettings['exporter']): SpanExporter {
  const options = {
    url,
    headers: { ...headers },
    timeoutMillis: timeoutMs,
    compression: compression === 'gzip' ? CompressionAlgorithm.GZIP : CompressionAlgorithm.NONE,
  };
  return protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtobufExporter(options);
}

function samplerFor({ name, ratio }: TracingSettings['sampler']): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** W3C Trace Context and Baggage, as OTEL_PROPAGATORS lists them; none: each request starts a trace of its own. */
function propagatorFor(names: TracingSettings['propagators']): TextMapPropagator {
  const propagators = names.map((name) => (name === 'tracecontext' ? new W3CTraceContextPropagator() : new W3CBaggagePropagator()));
  if (propagators.length > 0) return new CompositePropagator({ propagators });
  return { inject: () => undefined, extract: () => ROOT_CONTEXT, fields: () => [] };
}

function errorCode(error: Error | undefined): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' || typeof code === 'number' ? String(code) : error?.name;
}
