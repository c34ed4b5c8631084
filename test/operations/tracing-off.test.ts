// Tracing off (no OTEL_* variable sets it up, the default) costs nothing: the built service
// loads no OpenTelemetry code at all, neither a package from node_modules nor a chunk of dist/
// that holds one (scripts/build.mjs keeps it in the chunk src/tracing/open-telemetry.ts becomes).
// Every module the process loads is recorded (test/helpers/service/record-loaded-modules.mjs),
// and each file read: with tracing on, the same check finds OpenTelemetry, so it can tell.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { filesLoadedByService } from '../helpers/service/loaded-modules.js';
import { killAllChildServices } from '../helpers/service/start-service.js';

const dir = mkdtempSync(join(tmpdir(), 'books-tracing-off-'));
afterAll(async () => {
  await killAllChildServices();
  rmSync(dir, { recursive: true, force: true });
});

/** The files the built service loaded to start and answer a request, with `env` on top of the test settings. */
function filesLoaded(name: string, env: Record<string, string>): Promise<string[]> {
  return filesLoadedByService(dir, name, env, async (baseUrl) => {
    expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);
  });
}

/** The files among `files` that are OpenTelemetry's package files, or hold bundled OpenTelemetry code. */
function openTelemetryIn(files: string[]): string[] {
  return files.filter((file) => file.includes('@opentelemetry') || readFileSync(file, 'utf8').includes('@opentelemetry/'));
}

describe('tracing off', () => {
  it('the built service loads no OpenTelemetry code; with tracing on, the same check finds it', async () => {
    const off = await filesLoaded('off', {});
    expect(off.some((file) => file.endsWith('dist/main.js'))).toBe(true);
    expect(openTelemetryIn(off)).toEqual([]);

    const on = await filesLoaded('on', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '500' });
    expect(openTelemetryIn(on).length).toBeGreaterThan(0);
  });
});
