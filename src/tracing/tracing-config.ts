// How OpenTelemetry's standard variables (OTEL_*) configure tracing, read at startup without
// loading OpenTelemetry. Tracing is off unless an OTLP endpoint is set or OTEL_TRACES_EXPORTER
// is `otlp`; OTEL_TRACES_EXPORTER=none or OTEL_SDK_DISABLED=true turn it off whatever else is
// set. While it is off nothing else here is read, so a leftover OTEL_* variable cannot stop
// the service from starting.
//
// The names, defaults and formats are the specification's ("Environment Variable
// Specification" and "OTLP Exporter Configuration"); what the service does not implement
// (gRPC, other exporters and propagators, remote samplers) is refused by name rather than
// ignored.

type Env = Record<string, string | undefined>;
type Invalid = new (message: string) => Error;

/** How spans go over HTTP: protobuf (the specification's default) or JSON. */
export type OtlpProtocol = 'http/protobuf' | 'http/json';

export type SamplerName =
  | 'always_on'
  | 'always_off'
  | 'traceidratio'
  | 'parentbased_always_on'
  | 'parentbased_always_off'
  | 'parentbased_traceidratio';

export type PropagatorName = 'tracecontext' | 'baggage';

export interface TracingSettings {
  /** OTEL_SERVICE_NAME, else service.name in OTEL_RESOURCE_ATTRIBUTES, else DEFAULT_SERVICE_NAME. */
  serviceName: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded (service.name is `serviceName`). */
  resourceAttributes: Readonly<Record<string, string>>;
  exporter: {
    /** Where spans are posted: the traces endpoint itself (`…/v1/traces`). */
    url: string;
    /** The URL without user info, query or fragment: safe to log. */
    description: string;
    protocol: OtlpProtocol;
    /** Sent with every export (an API key, say): never logged. */
    headers: Readonly<Record<string, string>>;
    /** Bound on one export, retries included. */
    timeoutMs: number;
    compression: 'gzip' | 'none';
  };
  sampler: { name: SamplerName; ratio: number };
  /** Empty: incoming trace context is ignored (`OTEL_PROPAGATORS=none`). */
  propagators: readonly PropagatorName[];
  /** The batch span processor: its queue is what bounds the memory an unreachable collector costs. */
  batch: { scheduleDelayMs: number; exportTimeoutMs: number; maxQueueSize: number; maxExportBatchSize: number };
}

export const DEFAULT_SERVICE_NAME = 'book-collection';
/** The specification's default endpoint, used when OTEL_TRACES_EXPORTER=otlp names none. */
const DEFAULT_ENDPOINT = 'http://localhost:4318/';
const SAMPLERS: readonly SamplerName[] = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
];
const PROPAGATORS: readonly PropagatorName[] = ['tracecontext', 'baggage'];

/** What a key=value list may hold: an HTTP header (a token, a value without control characters), or a resource attribute. */
interface ListSyntax {
  key: RegExp;
  value: (value: string) => boolean;
}
const HEADER: ListSyntax = { key: /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/, value: (value) => !hasControlCharacter(value) };
const ATTRIBUTE: ListSyntax = { key: /^[\w.\-/:]+$/, value: () => true };

function hasControlCharacter(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** The tracing settings, or undefined when tracing is off. Throws `Invalid` naming the variable. */
export function parseTracingSettings(env: Env, Invalid: Invalid): TracingSettings | undefined {
  if (sdkDisabled(env, Invalid)) return undefined;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim().toLowerCase();
  if (exporter !== undefined && exporter !== 'otlp' && exporter !== 'none') {
    throw new Invalid(`OTEL_TRACES_EXPORTER must be otlp or none (the service exports OTLP over HTTP only); got "${env.OTEL_TRACES_EXPORTER}"`);
  }
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (exporter === 'none' || (exporter === undefined && tracesEndpoint === undefined && endpoint === undefined)) return undefined;

  const url =
    tracesEndpoint !== undefined
      ? httpUrl(tracesEndpoint, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', Invalid)
      : appendTracesPath(endpoint === undefined ? DEFAULT_ENDPOINT : httpUrl(endpoint, 'OTEL_EXPORTER_OTLP_ENDPOINT', Invalid));
  const resourceAttributes = keyValueList(env, 'OTEL_RESOURCE_ATTRIBUTES', ATTRIBUTE, Invalid);
  const serviceName = env.OTEL_SERVICE_NAME ?? resourceAttributes['service.name'] ?? DEFAULT_SERVICE_NAME;
  delete resourceAttributes['service.name'];
  const maxQueueSize = integer(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000, Invalid);
  const maxExportBatchSize = integer(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', Math.min(512, maxQueueSize), 1, 1_000_000, Invalid);
  if (maxExportBatchSize > maxQueueSize) {
    throw new Invalid(`OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${maxExportBatchSize}) must not be larger than OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`);
  }
  return {
    serviceName,
    resourceAttributes,
    exporter: {
      url,
      description: describeEndpoint(url),
      protocol: protocol(env, Invalid),
      headers: {
        ...keyValueList(env, 'OTEL_EXPORTER_OTLP_HEADERS', HEADER, Invalid),
        ...keyValueList(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS', HEADER, Invalid),
      },
      timeoutMs: integer(env, signalOrGeneral(env, 'TIMEOUT'), 10_000, 1, 600_000, Invalid),
      compression: compression(env, Invalid),
    },
    sampler: sampler(env, Invalid),
    propagators: propagators(env, Invalid),
    batch: {
      scheduleDelayMs: integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000, 0, 600_000, Invalid),
      exportTimeoutMs: integer(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 600_000, Invalid),
      maxQueueSize,
      maxExportBatchSize,
    },
  };
}

/** The endpoint for logs and messages: scheme, host, port and path only (no credentials, no query). */
export function describeEndpoint(url: string): string {
  try {
    const { protocol, host, pathname } = new URL(url);
    return `${protocol}//${host}${pathname}`;
  } catch {
    return '(not a URL)';
  }
}

function sdkDisabled(env: Env, Invalid: Invalid): boolean {
  const raw = env.OTEL_SDK_DISABLED?.trim().toLowerCase();
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw new Invalid(`OTEL_SDK_DISABLED must be true or false; got "${env.OTEL_SDK_DISABLED}"`);
}

/** The traces variable if set (`OTEL_EXPORTER_OTLP_TRACES_<name>`), else the one for every signal. */
function signalOrGeneral(env: Env, name: string): string {
  const traces = `OTEL_EXPORTER_OTLP_TRACES_${name}`;
  return env[traces] === undefined ? `OTEL_EXPORTER_OTLP_${name}` : traces;
}

function httpUrl(raw: string, name: string, Invalid: Invalid): string {
  let url: URL | undefined;
  try {
    url = new URL(raw.trim());
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new Invalid(`${name} must be an http:// or https:// URL; got "${describeEndpoint(raw)}"`);
  }
  return url.href;
}

/** OTEL_EXPORTER_OTLP_ENDPOINT is a base URL: traces go to its path + `v1/traces`. */
function appendTracesPath(base: string): string {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/$/, '')}/v1/traces`;
  return url.href;
}

function protocol(env: Env, Invalid: Invalid): OtlpProtocol {
  const name = signalOrGeneral(env, 'PROTOCOL');
  const raw = env[name]?.trim().toLowerCase() ?? 'http/protobuf';
  if (raw === 'http/protobuf' || raw === 'http/json') return raw;
  throw new Invalid(`${name} must be http/protobuf or http/json (gRPC is not supported); got "${env[name]}"`);
}

function compression(env: Env, Invalid: Invalid): 'gzip' | 'none' {
  const name = signalOrGeneral(env, 'COMPRESSION');
  const raw = env[name]?.trim().toLowerCase() ?? 'none';
  if (raw === 'gzip' || raw === 'none') return raw;
  throw new Invalid(`${name} must be gzip or none; got "${env[name]}"`);
}

function sampler(env: Env, Invalid: Invalid): TracingSettings['sampler'] {
  const raw = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() ?? 'parentbased_always_on';
  const name = SAMPLERS.find((known) => known === raw);
  if (name === undefined) throw new Invalid(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}; got "${env.OTEL_TRACES_SAMPLER}"`);
  const arg = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  if (arg === undefined || !name.endsWith('traceidratio')) return { name, ratio: 1 };
  const ratio = Number(arg);
  if (!/^\d*\.?\d+(e-?\d+)?$/i.test(arg) || !(ratio >= 0 && ratio <= 1)) {
    throw new Invalid(`OTEL_TRACES_SAMPLER_ARG must be a probability from 0 to 1 for ${name}; got "${env.OTEL_TRACES_SAMPLER_ARG}"`);
  }
  return { name, ratio };
}

function propagators(env: Env, Invalid: Invalid): PropagatorName[] {
  const names = (env.OTEL_PROPAGATORS ?? 'tracecontext,baggage')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  if (names.length === 1 && names[0] === 'none') return [];
  const unknown = names.filter((name) => !PROPAGATORS.includes(name as PropagatorName));
  if (names.length === 0 || unknown.length > 0) {
    throw new Invalid(`OTEL_PROPAGATORS must be a comma-separated list of tracecontext and baggage, or none; got "${env.OTEL_PROPAGATORS}"`);
  }
  return [...new Set(names as PropagatorName[])];
}

/**
 * `key=value,key=value` with percent-encoded values (W3C Baggage style), as the specification
 * writes OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS. A malformed entry names the
 * variable only: a header's value may be a credential.
 */
function keyValueList(env: Env, name: string, syntax: ListSyntax, Invalid: Invalid): Record<string, string> {
  const result: Record<string, string> = {};
  const raw = env[name];
  if (raw === undefined) return result;
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    const key = equals > 0 ? entry.slice(0, equals).trim() : '';
    let value: string | undefined;
    try {
      value = equals > 0 ? decodeURIComponent(entry.slice(equals + 1).trim()) : undefined;
    } catch {
      value = undefined;
    }
    if (value === undefined || !syntax.key.test(key) || !syntax.value(value)) {
      throw new Invalid(`${name} must be a comma-separated list of key=value with percent-encoded values; entry ${Object.keys(result).length + 1} is not`);
    }
    result[key] = value;
  }
  return result;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number, Invalid: Invalid): number {
  const raw = env[name]?.trim();
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new Invalid(`${name} must be an integer from ${min} to ${max}; got "${env[name]}"`);
  }
  return Number(raw);
}
