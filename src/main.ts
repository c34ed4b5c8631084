#!/usr/bin/env node
// Entry point of `npm start` and `node dist/main.js`. It turns on Node's module compile cache
// (Node 22.1 and later; a no-op on 20), then loads the rest: the cache must be on before the
// service's code is compiled, so that code is loaded from here, not imported statically.
// With the cache, a restart reads V8's compiled code from disk instead of compiling the bundle
// again (docs/benchmarks-changes.md, "Footprint: one bundle, and the heap sized").
//
// It is also the composition root of the speed paths: the one module outside src/fast/ that
// names the room. It hands the command a loader, called only when FAST_PATHS turns a path on,
// so with FAST_PATHS=off the room is never read (as Kysely's core never imports a plugin:
// the application hands it the plugins it wants).
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
const { runCommand } = await import('./run-command.js');
await runCommand({ loadFastPaths: async (names) => (await import('./fast/index.js')).loadFastPaths(names) });
