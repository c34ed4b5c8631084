// V8's heap sized for a small service (the speed path heap-sizing, on by default; FAST_PATHS,
// or HEAP_SIZING=false, turns it off): the one place that changes V8's garbage collector
// settings while the process runs. Plugged in through FastPaths.sizeHeap (src/seams.ts).
//
// Left to itself V8 lets the young generation grow to 32 MiB, and lets the old generation grow
// to up to four times what is live before collecting it (docs/operations.md, "Processes and
// memory"). For this service that is most of its memory: a process holds 40 MiB of Node itself,
// about 25 MiB of live heap, and then whatever V8 keeps in reserve. The flags that set both at
// startup (`--max-semi-space-size`, `--max-old-space-size`) are read when V8 starts, before
// any of our code runs, and `node dist/main.js` is how the service is started. So this module
// sets the two that V8 reads at every collection instead:
//   - `--semi-space-growth-factor`: the young generation grows by doubling. It is held still
//     while the app is built (a burst of allocation that would double it twice before anything
//     could look), then, once the service listens, allowed to double only while that stays
//     within YOUNG_GENERATION_CAP_BYTES, checked after every collection (Node 22 and 24's V8
//     has grown it to 8 MiB while the bundle loads, before this runs);
//   - `--heap-growing-percent`: the old generation's next limit is what is live plus this share.
// Node documents v8.setFlagsFromString after startup as unsupported: HEAP_SIZING=off turns this
// module off (so does FAST_PATHS=off), the suite passes with it off, and flags the operator gives Node themselves
// (NODE_OPTIONS or the command line) are left alone.
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

/** The young generation's size, both semi-spaces (V8's own `--max-semi-space-size=4`). */
export const YOUNG_GENERATION_CAP_BYTES = 8 * 1024 * 1024;
/** The old generation may grow to what is live plus this share before it is collected. */
export const OLD_GENERATION_GROWING_PERCENT = 25;

/**
 * Flags with which the operator sized a generation themselves; each leaves that half alone. A
 * ceiling (`--max-old-space-size`, which the supervisor also gives workers) is a limit, not a
 * growth rate: it stays as given, and the old generation's growth is still set.
 */
const YOUNG_FLAGS = /--(max|min)[-_]semi[-_]space[-_]size|--semi[-_]space[-_]growth[-_]factor|--max[-_]heap[-_]size/;
const OLD_FLAGS = /--heap[-_]growing[-_]percent/;

export interface HeapSizing {
  /** What this process set: the young generation's cap, the old generation's growth, neither. */
  young: boolean;
  old: boolean;
  /** Once the service listens: the young generation may grow up to its cap. */
  watch(): void;
  /** Stops watching collections (the young generation then stays as it is). */
  stop(): void;
}

/**
 * Sizes this process's heap; `nodeFlags` is what the operator gave Node (its command line and
 * NODE_OPTIONS), to leave their own choices alone.
 */
export function sizeHeap(nodeFlags: string): HeapSizing {
  const sizing: HeapSizing = { young: false, old: false, watch: () => undefined, stop: () => undefined };
  if (!OLD_FLAGS.test(nodeFlags)) {
    v8.setFlagsFromString(`--heap-growing-percent=${OLD_GENERATION_GROWING_PERCENT}`);
    sizing.old = true;
  }
  if (!YOUNG_FLAGS.test(nodeFlags)) {
    setYoungGrowth(false);
    const observer = new PerformanceObserver(() => setYoungGrowth(youngGenerationBytes() * 2 <= YOUNG_GENERATION_CAP_BYTES));
    sizing.young = true;
    sizing.watch = () => {
      setYoungGrowth(youngGenerationBytes() * 2 <= YOUNG_GENERATION_CAP_BYTES);
      observer.observe({ entryTypes: ['gc'] });
    };
    sizing.stop = () => observer.disconnect();
  }
  return sizing;
}

let youngGrowing: boolean | undefined;

/** Doubling (V8's default factor, 2) or held at its size (1). */
function setYoungGrowth(grow: boolean): void {
  if (grow === youngGrowing) return;
  youngGrowing = grow;
  v8.setFlagsFromString(`--semi-space-growth-factor=${grow ? 2 : 1}`);
}

function youngGenerationBytes(): number {
  return v8.getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.space_size ?? 0;
}
