// Tracing on or off, as the settings say. Only this module knows OpenTelemetry exists: it loads
// src/tracing/open-telemetry.ts (and with it every OpenTelemetry package) with a dynamic import,
// and only when OTEL_* variables turn tracing on, so with tracing off none of that code is even
// read from disk (the build keeps it out of main.js). Kept apart from tracing.ts, which every
// tracing module imports for its types: that import and this one would make a cycle.
import type { Logger } from 'pino';
import type { TracingSettings } from './tracing-config.js';
import { NO_TRACING, type Tracing } from './tracing.js';

/** Tracing as the settings say: NO_TRACING when off; when on, OpenTelemetry is loaded now. */
export async function startTracing(settings: Readonly<TracingSettings> | undefined, logger: Logger): Promise<Tracing> {
  if (settings === undefined) return NO_TRACING;
  const { openTelemetryTracing } = await import('./open-telemetry.js');
  return openTelemetryTracing(settings, logger);
}
