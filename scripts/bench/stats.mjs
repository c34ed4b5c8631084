// From runs to figures: medians, and one scenario's rounds summed up (medians of req/s and
// latency, errors summed over the rounds and their warm-ups).

export function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function round1(value) {
  return value == null ? null : Math.round(value * 10) / 10;
}

export function summarise(rounds, warmups) {
  const sum = (list, pick) => list.reduce((total, item) => total + pick(item), 0);
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    maxMs: median(rounds.map((r) => r.maxMs)),
    requests: sum(rounds, (r) => r.requests),
    errors: sum(rounds, (r) => r.errors),
    non2xx: sum(rounds, (r) => r.non2xx),
    socketErrors: Object.fromEntries(
      ['connect', 'read', 'write', 'timeout'].map((kind) => [kind, sum(rounds, (r) => r.socketErrors[kind] ?? 0)]),
    ),
    warmupErrors: sum(warmups, (r) => r.errors),
    rounds: rounds.map(({ raw: _raw, ...rest }) => rest),
  };
}
