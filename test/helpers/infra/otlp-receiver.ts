// An OTLP/HTTP receiver of the test's own, on a free port: the collector the service exports its
// spans to. What arrives at /v1/traces as OTLP/JSON (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) is
// decoded into spans; what arrives as protobuf is kept as bytes. A test can make it stall (every
// export held unanswered, as a collector that accepts connections and never answers) and stop it.
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { freePort } from './free-port.js';

/** An attribute value as OTLP/JSON writes it: strings, numbers (int64 as a string), booleans, arrays. */
export type AttributeValue = string | number | boolean | AttributeValue[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's span kind: 2 server, 3 client. */
  kind: number;
  attributes: Record<string, AttributeValue>;
  links: { traceId: string; spanId: string }[];
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
  /** The resource's attributes (service.name, host.name…). */
  resource: Record<string, AttributeValue>;
  /** Every value in the span as sent (its name, its attributes' and its resource's values), for scanning. */
  text: string;
}

export interface ReceivedExport {
  contentType: string;
  body: Buffer;
}

export interface OtlpReceiver {
  /** The base endpoint, for OTEL_EXPORTER_OTLP_ENDPOINT (`/v1/traces` is appended by the service). */
  endpoint: string;
  /** Every span received so far (OTLP/JSON exports). */
  spans(): ReceivedSpan[];
  /** Every export received so far, as sent. */
  exports(): ReceivedExport[];
  /** Polls until `found` returns something truthy for the spans received (default 10 s), and returns that. */
  waitFor<T>(found: (spans: ReceivedSpan[]) => T | undefined | false, timeoutMs?: number): Promise<T>;
  /** While stalled, exports are read and never answered. */
  stall(stalled: boolean): void;
  /** Forgets what was received. */
  clear(): void;
  close(): Promise<void>;
}

interface JsonAnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: JsonAnyValue[] };
}
interface JsonKeyValue {
  key: string;
  value: JsonAnyValue;
}
interface JsonSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: JsonKeyValue[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number };
}
interface JsonExport {
  resourceSpans?: { resource?: { attributes?: JsonKeyValue[] }; scopeSpans?: { spans?: JsonSpan[] }[] }[];
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  const bodies: ReceivedExport[] = [];
  const held = new Set<ServerResponse>();
  let stalled = false;

  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    if (request.method !== 'POST' || request.url !== '/v1/traces') {
      response.writeHead(404).end();
      return;
    }
    if (stalled) {
      held.add(response);
      return;
    }
    const contentType = request.headers['content-type'] ?? '';
    bodies.push({ contentType, body });
    if (contentType.startsWith('application/json')) received.push(...decode(JSON.parse(body.toString('utf8')) as JsonExport));
    response.writeHead(200, { 'content-type': contentType }).end(contentType.startsWith('application/json') ? '{}' : '');
  });
  const port = await freePort();
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');

  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    exports: () => [...bodies],
    async waitFor(found, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const result = found([...received]);
        if (result) return result;
        if (Date.now() > deadline) throw new Error(`the receiver did not get the spans looked for within ${timeoutMs} ms (${received.length} received)`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    stall(value) {
      stalled = value;
      if (!value) {
        for (const response of held) response.destroy();
        held.clear();
      }
    },
    clear() {
      received.length = 0;
      bodies.length = 0;
    },
    async close() {
      for (const response of held) response.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function decode(payload: JsonExport): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of payload.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        const attributes = attributesOf(span.attributes);
        spans.push({
          traceId: span.traceId,
          spanId: span.spanId,
          parentSpanId: span.parentSpanId ?? '',
          name: span.name,
          kind: span.kind,
          attributes,
          links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
          statusCode: span.status?.code ?? 0,
          resource,
          text: JSON.stringify([span.name, Object.values(attributes), Object.values(resource)]),
        });
      }
    }
  }
  return spans;
}

function attributesOf(list: JsonKeyValue[] | undefined): Record<string, AttributeValue> {
  const attributes: Record<string, AttributeValue> = {};
  for (const { key, value } of list ?? []) attributes[key] = valueOf(value);
  return attributes;
}

function valueOf(value: JsonAnyValue): AttributeValue {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}
