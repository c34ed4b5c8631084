// The speed path counted-metrics (src/fast/counted-metrics.ts) stands in for prom-client's own
// Counter and Histogram (src/plugins/app/metrics.ts): the same requests give the same /metrics
// text, byte for byte. Skipped when FAST_PATHS turns counted-metrics off (it tests that path).
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { countedRequestMetrics } from '../../src/fast/counted-metrics.js';
import { DURATION_BUCKETS, REQUEST_METRICS_HELP, promClientRequestMetrics } from '../../src/plugins/app/metrics.js';
import { fastPaths } from '../helpers/node-http.js';

// Tests the speed path itself: skipped when FAST_PATHS turns counted-metrics off.
describe.skipIf(!fastPaths.has('counted-metrics'))('counted request metrics', () => {
  it('write the exposition prom-client writes for the same requests', async () => {
    const plain = new Registry();
    const counted = new Registry();
    const recorders = [promClientRequestMetrics(plain, DURATION_BUCKETS, REQUEST_METRICS_HELP), countedRequestMetrics(counted, DURATION_BUCKETS, REQUEST_METRICS_HELP)];
    const requests: [string, string, number, number][] = [
      ['GET', '/book/:id', 200, 0.0004],
      ['POST', '/token', 200, 0.003],
      ['GET', '/book/:id', 404, 0.2],
      ['GET', '/book/:id', 200, 0.0005], // on a bound: counted in that bucket
      ['GET', '/book/:id', 200, 12], // past the highest bound: +Inf only
      ['DELETE', 'unmatched', 404, 0.001],
    ];
    for (const recorder of recorders) for (const request of requests) recorder.record(...request);
    const text = await counted.metrics();
    expect(text).toContain('http_request_duration_seconds_bucket{le="0.0005",method="GET",route="/book/:id",status="200"} 2');
    expect(text).toBe(await plain.metrics());
  });
});
