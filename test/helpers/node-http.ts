// The Node HTTP layer's switch (HTTP_MACHINERY, src/http/node) as the test runner was given it:
// every service the tests start runs with it, and the tests of a part skip when it is off.
//   HTTP_MACHINERY=off npm test   # the whole suite on plain Fastify and Node
import { parseHttpMachinery } from '../../src/config.js';

/** Which parts of the layer the services under test run with. */
export const machinery = parseHttpMachinery(process.env.HTTP_MACHINERY);

/**
 * HEAP_SIZING (src/runtime/heap-sizing.ts), the other switch of what reaches below a public API,
 * for the services the tests start as child processes (`HEAP_SIZING=false npm test`).
 */
export const heapSizingEnv: Record<string, string> = process.env.HEAP_SIZING ? { HEAP_SIZING: process.env.HEAP_SIZING } : {};
export const heapSizingOn = !/^(false|0|no|off)$/i.test(process.env.HEAP_SIZING?.trim() ?? '');

/** HTTP_MACHINERY for a service the tests start, in process or as a child (empty: the default, on). */
export const machineryEnv: Record<string, string> =
  process.env.HTTP_MACHINERY ? { HTTP_MACHINERY: process.env.HTTP_MACHINERY } : {};
