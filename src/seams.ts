// The seams the plain service leaves for speed: every place where a layer may stand in for a
// plain part, as one optional member of FastPaths. The plain code owns this interface and reads
// only it; the layers that fill it live in src/fast/ (the room), one file or folder per path,
// and the entry point (src/main.ts) loads the room only when FAST_PATHS turns a path on. Nothing
// outside src/fast/ and src/main.ts imports the room, so with FAST_PATHS=off the service is the
// plain one and not one module of the room is loaded.
import type { FastifyPluginAsync, FastifyServerOptions } from 'fastify';
import type { RequestListener } from './http/node/server.js';

/** The speed paths, by their names in the FAST_PATHS setting (docs/benchmarks.md says what each buys). */
export const FAST_PATH_NAMES = [
  'answer-in-turns',
  'shared-lists',
  'batched-queries',
  'group-commit',
  'counted-metrics',
  'one-read-body',
  'batched-log',
  'token-cache',
  'precompiled-schemas',
  'lazy-api-reference',
  'heap-sizing',
] as const;

export type FastPathName = (typeof FAST_PATH_NAMES)[number];

/** What a layer that answers requests in turns gives the HTTP server. */
export interface ListenerLayer {
  /** The 'request' listener, standing in for `handler`. */
  listener: RequestListener;
  /** A 'connection' listener, told of every accepted connection. */
  connectionAccepted?(): void;
}

/** Fastify's `schemaController.compilersFactory`: what makes the routes' validators and serializers. */
export type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** What the speed paths that are on hand the plain service. Every member is optional: missing is plain. */
export interface FastPaths {
  /** Sizes V8's heap before the app is built; `watch()` once the service listens. */
  sizeHeap?(nodeFlags: string): { watch(): void };
  /** Stands between Node's HTTP server and Fastify's handler (answer-in-turns). */
  requestListener?(handler: RequestListener): ListenerLayer;
  /** The routes' validators and serializers instead of Fastify's compiling them at startup (precompiled-schemas); undefined: Fastify's. */
  schemaCompilers?(): SchemaCompilers | undefined;
  /** Registered in place of src/plugins/external/openapi.ts: the OpenAPI document and /docs, as `openapiDocument` (lazy-api-reference). */
  apiReference?: FastifyPluginAsync;
}

/** The plain service: no speed path. */
export const NO_FAST_PATHS: FastPaths = Object.freeze({});

/** Loads the room's layers for the names that are on (given to the serve command by src/main.ts). */
export type LoadFastPaths = (names: ReadonlySet<FastPathName>) => Promise<FastPaths>;
