// Spans for the work a request waits for (its queries, its login-limit checks), in the trace of
// the request they serve. Most work serves one request: its span is a child of that request's
// span, found in the active context. Work shared by several requests (a batch of
// src/tracing/shared-loader.ts) runs in a context that names all of them; a span started there
// is made once in each of their traces, so that every request's trace shows the query that
// served it, however many requests it served:
//
//   - each copy is a child of its own request's span, with the same name, times and attributes;
//   - each carries book.shared_query.size, the number of requests the query served;
//   - each copy but the first links to the first, so that a backend can tell they are one query
//     (count database work by the copies without a link).
//
// Work that serves no recorded request (the key purge, startup, an untraced route, an unsampled
// trace) gets no span, and costs a context lookup.
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  createContextKey,
  trace,
  type Attributes,
  type Context,
  type ContextManager,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { ATTR_ERROR_TYPE } from '@opentelemetry/semantic-conventions';
import type { BatchRequests } from './tracing.js';

/** How many requests a shared query served (on each of its copies); absent when it served one. */
export const ATTR_SHARED_QUERY_SIZE = 'book.shared_query.size';

/** In a context: the (recording) spans of the requests the work running in it serves, when there are several. */
const SERVED = createContextKey('book-service: the spans of the requests served');
const NONE: readonly Span[] = [];

export interface RunOptions {
  /** Attributes known only once the work is done. */
  atEnd?: () => Attributes | undefined;
  /** Spans started by the work are children of this one. */
  parentOfMore?: boolean;
}

export class WorkSpans {
  constructor(
    private readonly tracer: Tracer,
    readonly contexts: ContextManager,
  ) {}

  /** The batch's queries, each run in a context that names the requests it serves. */
  batchOf(askers: readonly (Context | undefined)[]): BatchRequests {
    return {
      all: (query) => this.serving(askers, query),
      some: (serves, query) => this.serving(askers.filter((_asker, index) => serves(index)), query),
      one: (index, query) => this.serving([askers[index]], query),
    };
  }

  /**
   * Runs `work` under a span in the trace of each request it serves that is being recorded
   * (none: without a span; an unsampled trace records nothing). `atEnd` adds what is known only
   * once the work is done (the database node that answered); `parentOfMore`: spans started by
   * `work` are children of this one (a transaction's statements), which costs running it in a
   * context of its own. A failure sets the span's status and `error.type` (a code or class
   * name, never a message: a database's messages may quote values).
   */
  run<T>(name: string, attributes: Attributes, work: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    return this.runUnder(this.recordingParents(), name, attributes, work, options);
  }

  /** `run`, under the parents `recordingParents()` gave (a caller that must prepare its span asks first, so that no request pays for it when none is recorded). */
  runUnder<T>(parents: readonly Span[], name: string, attributes: Attributes, work: () => Promise<T>, options: RunOptions = {}): Promise<T> {
    if (parents.length === 0) return work();
    const spans = this.startEach(name, attributes, parents);
    let running: Promise<T>;
    try {
      running = options.parentOfMore ? this.contexts.with(contextServing(spans), work) : work();
    } catch (error) {
      endAll(spans, options.atEnd, error);
      throw error;
    }
    return running.then(
      (result) => {
        endAll(spans, options.atEnd, undefined);
        return result;
      },
      (error: unknown) => {
        endAll(spans, options.atEnd, error);
        throw error;
      },
    );
  }

  /** The recording spans of the requests the work running now serves (none: nothing to record). */
  recordingParents(): readonly Span[] {
    const active = this.contexts.active();
    const served = active.getValue(SERVED) as Span[] | undefined;
    if (served) return served;
    const span = trace.getSpan(active);
    return span?.isRecording() ? [span] : NONE;
  }

  /** One span under each parent; copies after the first link to it. */
  private startEach(name: string, attributes: Attributes, parents: readonly Span[]): Span[] {
    const first = this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, trace.setSpan(ROOT_CONTEXT, parents[0]!));
    if (parents.length === 1) return [first];
    first.setAttribute(ATTR_SHARED_QUERY_SIZE, parents.length);
    const shared = { ...attributes, [ATTR_SHARED_QUERY_SIZE]: parents.length };
    const links = [{ context: first.spanContext() }];
    const spans = [first];
    for (let index = 1; index < parents.length; index += 1) {
      spans.push(this.tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes: shared, links }, trace.setSpan(ROOT_CONTEXT, parents[index]!)));
    }
    return spans;
  }

  /** Runs `work` as serving the requests that `askers` (their contexts) stand for. */
  private serving<T>(askers: readonly (Context | undefined)[], work: () => Promise<T>): Promise<T> {
    const spans: Span[] = [];
    for (const asker of askers) {
      if (asker === undefined) continue;
      const served = asker.getValue(SERVED) as Span[] | undefined;
      if (served) spans.push(...served);
      else {
        const span = trace.getSpan(asker);
        if (span?.isRecording()) spans.push(span);
      }
    }
    return this.contexts.with(contextServing(spans), work);
  }
}

/** Where its spans end: the attributes known at the end, and the failure, if any. */
function endAll(spans: readonly Span[], atEnd: (() => Attributes | undefined) | undefined, failure: unknown) {
  const attributes = atEnd?.();
  for (const span of spans) {
    if (attributes) span.setAttributes(attributes);
    if (failure !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, errorType(failure));
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/** The context for work that serves the requests of these spans (none: outside any trace). */
function contextServing(spans: readonly Span[]): Context {
  if (spans.length === 0) return ROOT_CONTEXT;
  const context = trace.setSpan(ROOT_CONTEXT, spans[0]!);
  return spans.length === 1 ? context : context.setValue(SERVED, spans);
}

/** A failure's kind: its code (`ECONNREFUSED`, `57014`, `ER_LOCK_WAIT_TIMEOUT`) or its class. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' || typeof code === 'number') return String(code);
  return error instanceof Error ? error.name : 'unknown';
}
