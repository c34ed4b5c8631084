// The count behind otel_spans_dropped_total: spans that ended in a sampled trace but will never
// reach the collector. Two ways to be lost, both counted:
//
//   - the queue was full: while exports lag (a slow or unreachable collector) the batch span
//     processor keeps at most OTEL_BSP_MAX_QUEUE_SIZE spans, and refuses the ones after;
//   - their export failed: the collector refused them, could not be reached, or did not answer
//     within OTEL_EXPORTER_OTLP_TIMEOUT (after the exporter's own retries).
//
// The batch span processor counts the first kind privately. So the processor is wrapped by one
// that keeps the same count of queued spans (a span enters the queue when it ends and leaves it
// when the processor hands it to the exporter, which is wrapped too) and refuses a span itself
// when that count is at the limit, before the processor would: the two counts agree, through
// public interfaces only.
import { TraceFlags, type Context } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base';

export class DroppedSpans {
  /** Spans lost so far. */
  count = 0;
  /** Spans queued: ended, not yet handed to the exporter. */
  private queued = 0;

  constructor(
    private readonly maxQueueSize: number,
    /** Told when exports start failing (true) and when one succeeds again (false). */
    private readonly onFailing: (failing: boolean, error: Error | undefined) => void,
  ) {}

  /** `processor` (a batch span processor with this queue size) behind the count of its queue. */
  bounding(processor: SpanProcessor): SpanProcessor {
    return {
      onStart: (span: Span, parentContext: Context) => processor.onStart(span, parentContext),
      onEnd: (span: ReadableSpan) => {
        // Unsampled spans are never queued (the processor ignores them too).
        if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
        if (this.queued >= this.maxQueueSize) {
          this.count += 1;
          return;
        }
        this.queued += 1;
        processor.onEnd(span);
      },
      forceFlush: () => processor.forceFlush(),
      shutdown: () => processor.shutdown(),
    };
  }

  /** `exporter`, counting the spans it is handed out of the queue, and those whose export failed. */
  counting(exporter: SpanExporter): SpanExporter {
    let failing = false;
    return {
      export: (spans: ReadableSpan[], resultCallback: (result: ExportResult) => void) => {
        this.queued -= spans.length;
        exporter.export(spans, (result) => {
          const failed = result.code !== ExportResultCode.SUCCESS;
          if (failed) this.count += spans.length;
          if (failed !== failing) {
            failing = failed;
            this.onFailing(failed, result.error);
          }
          resultCallback(result);
        });
      },
      shutdown: () => exporter.shutdown(),
      forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
    };
  }
}
