// A DataLoader whose batch function also learns which requests its batch serves, so that a
// query shared by the requests that arrive together (src/fast/batched-queries/,
// src/fast/shared-lists.ts) shows in the trace of each of them. DataLoader runs a batch in the
// context of whichever request happened to ask first; without this, the shared query would
// belong to that request's trace alone.
//
// With tracing off this is DataLoader itself, its batch function given UNTRACED_BATCH: not one
// allocation more per request.
import DataLoader from 'dataloader';
import type { BatchRequests, TraceContext, Tracing } from './tracing.js';

export interface Loader<K, V> {
  load(key: K): Promise<V>;
}

/** A key and the trace context of the request that asked for it. */
interface Asked<K> {
  key: K;
  asker: TraceContext | undefined;
}

export function sharedLoader<K, V>(
  tracing: Tracing,
  batch: (keys: readonly K[], requests: BatchRequests) => PromiseLike<ArrayLike<V | Error>>,
  options: DataLoader.Options<K, V>,
): Loader<K, V> {
  if (!tracing.enabled) {
    const requests = tracing.batchOf([]);
    return new DataLoader<K, V>((keys) => batch(keys, requests), options);
  }
  const { batchScheduleFn, cache, maxBatchSize } = options;
  const loader = new DataLoader<Asked<K>, V>(
    (asked) =>
      batch(
        asked.map((item) => item.key),
        tracing.batchOf(asked.map((item) => item.asker)),
      ),
    { batchScheduleFn, cache, maxBatchSize },
  );
  return { load: (key) => loader.load({ key, asker: tracing.current() }) };
}
