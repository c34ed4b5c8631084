// Counted metrics (the speed path counted-metrics): the per-request families,
// `http_requests_total` and `http_request_duration_seconds`, counted by the service itself and
// read by prom-client's registry when /metrics is scraped. Plugged in through
// FastPaths.requestMetrics (src/seams.ts), where it stands in for prom-client's own Counter and
// Histogram of the same names, help, labels and buckets (src/plugins/app/metrics.ts).
//
// Why: prom-client's inc()/observe() each validate the labels, build a hash string of them and
// look it up, with an object and a closure per call; the pair cost 8 % of the throughput of
// POST /token, and counting here was +4.5 % on it (docs/benchmarks-changes.md, "POST /token,
// MariaDB's peak and the list wait"). Here a request finds its series through three Map lookups
// on values it already has and adds to numbers. The registry still writes the exposition format:
// each family below is an object with the name, help, type and get() that it reads from its
// metrics, and get() answers what prom-client's own Counter and Histogram would (the same lines,
// labels and values).
import type { Metric, Registry } from 'prom-client';
import type { RequestMetricsHelp, RequestRecorder } from '../seams.js';

type Labels = Record<'method' | 'route' | 'status', string>;

/** One method, route pattern and status: how many requests, and how long they took. */
interface Series {
  labels: Labels;
  count: number;
  sumSeconds: number;
  /** Requests per bucket (not cumulative); the last one is past the highest bound. */
  perBucket: Float64Array;
}

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

/** The two families, registered in `registry` (FastPaths.requestMetrics). */
export function countedRequestMetrics(registry: Registry, buckets: readonly number[], help: RequestMetricsHelp): RequestRecorder {
  const metrics = new RequestMetrics(buckets);
  metrics.registerIn(registry, help);
  return metrics;
}

export class RequestMetrics implements RequestRecorder {
  /** route → method → status → series. */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  /** Series in the order they first appeared (the order the families list them). */
  private readonly series: Series[] = [];

  constructor(
    /** Upper bounds of the duration buckets, in seconds, ascending. */
    private readonly bounds: readonly number[],
  ) {}

  /** Counts one finished request. */
  record(method: string, route: string, status: number, seconds: number): void {
    const series = this.seriesOf(method, route, status);
    series.count += 1;
    series.sumSeconds += seconds;
    const { bounds } = this;
    let bucket = 0;
    while (bucket < bounds.length && seconds > bounds[bucket]!) bucket += 1;
    series.perBucket[bucket]! += 1;
  }

  /** Registers both families in `registry`. */
  registerIn(registry: Registry, help: RequestMetricsHelp): void {
    // The registry reads a metric's name, help, type and aggregator, and its get(): this is that shape.
    const family = (name: string, type: 'counter' | 'histogram', helpText: string, values: () => MetricValue[]) =>
      ({
        name,
        help: helpText,
        type,
        aggregator: 'sum',
        get: async () => ({ name, help: helpText, type, aggregator: 'sum', values: values() }),
        reset: () => undefined,
      }) as unknown as Metric;
    registry.registerMetric(family('http_requests_total', 'counter', help.requests, () => this.counts()));
    registry.registerMetric(family('http_request_duration_seconds', 'histogram', help.duration, () => this.durations()));
  }

  private seriesOf(method: string, route: string, status: number): Series {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let series = byStatus.get(status);
    if (series === undefined) {
      series = { labels: { method, route, status: String(status) }, count: 0, sumSeconds: 0, perBucket: new Float64Array(this.bounds.length + 1) };
      byStatus.set(status, series);
      this.series.push(series);
    }
    return series;
  }

  private counts(): MetricValue[] {
    return this.series.map(({ labels, count }) => ({ value: count, labels }));
  }

  /** As prom-client's Histogram lists a series: cumulative buckets with `le` first, +Inf, sum, count. */
  private durations(): MetricValue[] {
    const name = 'http_request_duration_seconds';
    const values: MetricValue[] = [];
    for (const { labels, count, sumSeconds, perBucket } of this.series) {
      let cumulative = 0;
      this.bounds.forEach((bound, index) => {
        cumulative += perBucket[index]!;
        values.push({ value: cumulative, labels: { le: bound, ...labels }, metricName: `${name}_bucket` });
      });
      values.push({ value: count, labels: { le: '+Inf', ...labels }, metricName: `${name}_bucket` });
      values.push({ value: sumSeconds, labels, metricName: `${name}_sum` });
      values.push({ value: count, labels, metricName: `${name}_count` });
    }
    return values;
  }
}
