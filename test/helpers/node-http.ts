// The switches of what the services under test run with, as the test runner was given them:
// every service the tests start (in process or as a child) runs with them, and the tests of a
// speed path or of a protocol part skip when it is off.
//   FAST_PATHS=off npm test        # the plain service: no speed path (src/fast/ never loaded)
//   NODE_HTTP_PARTS=off npm test   # without the protocol fixes of src/http/node
// HTTP_MACHINERY (the older switch of both) and HEAP_SIZING (of heap-sizing alone) are passed on too.
import { loadConfig } from '../../src/config.js';
import { NO_FAST_PATHS, type FastPaths } from '../../src/seams.js';

const SWITCHES = ['FAST_PATHS', 'NODE_HTTP_PARTS', 'HTTP_MACHINERY', 'HEAP_SIZING'] as const;

/** The switches for a service the tests start (empty: the defaults, every path and part on). */
export const switchesEnv: Record<string, string> = Object.fromEntries(
  SWITCHES.flatMap((name) => (process.env[name] ? [[name, process.env[name]]] : [])),
);

const runnerConfig = loadConfig({ SECRET_TOKEN: 'test-runner-switches-0123456789abcdef', ...switchesEnv }, '/nonexistent');

/** Which protocol parts of src/http/node the services under test run with. */
export const machinery = runnerConfig.http.nodeHttpParts;

/** The speed paths the services under test run with. */
export const fastPaths = runnerConfig.fastPaths;

export const heapSizingOn = fastPaths.has('heap-sizing');

/** The room's layers for `names` (loaded only when one is on, as src/main.ts does). */
export async function loadFastPathsFor(names: ReadonlySet<string>): Promise<FastPaths> {
  if (names.size === 0) return NO_FAST_PATHS;
  const { loadFastPaths } = await import('../../src/fast/index.js');
  return loadFastPaths(names as Parameters<typeof loadFastPaths>[0]);
}
