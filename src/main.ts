#!/usr/bin/env node
// Entry point of `npm start` and `node dist/main.js`. It only turns on Node's module compile
// cache (Node 22.1 and later; a no-op on 20), then loads the rest: the cache must be on before
// the service's code is compiled, so that code is loaded from here, not imported statically.
// With the cache, a restart reads V8's compiled code from disk instead of compiling the bundle
// again (docs/benchmarks-changes.md, "Footprint: one bundle, and the heap sized").
import module from 'node:module';

(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
await import('./run-command.js');
