// The seams the plain service leaves for speed: every place where a layer may stand in for a
// plain part, as one optional member of FastPaths. The plain code owns this interface and reads
// only it; the layers that fill it live in src/fast/ (the room), one file or folder per path,
// and the entry point (src/main.ts) loads the room only when FAST_PATHS turns a path on. Nothing
// outside src/fast/ and src/main.ts imports the room, so with FAST_PATHS=off the service is the
// plain one and not one module of the room is loaded.
import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync, FastifyRequest, FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import type { Registry } from 'prom-client';
import type { VerifiedTokens } from './auth/tokens.js';
import type { BookListAnswers } from './http/book-list.js';
import type { ListenerLayer, RequestListener } from './http/node/listener.js';
import type { BookStore } from './store/book-store.js';
import type { StoreLayer } from './store/open-store.js';
import type { Tracing } from './tracing/tracing.js';

/** The speed paths, by their names in the FAST_PATHS setting (docs/benchmarks.md says what each buys). */
export const FAST_PATH_NAMES = [
  'answer-in-turns',
  'shared-lists',
  'bulk-lists',
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

/** The help texts of `http_requests_total` and `http_request_duration_seconds`. */
export interface RequestMetricsHelp {
  requests: string;
  duration: string;
}

/** Counts finished requests into `http_requests_total` and `http_request_duration_seconds`. */
export interface RequestRecorder {
  record(method: string, route: string, status: number, seconds: number): void;
}

/** Fastify's callback for a request body: the parsed value, or the error to answer. */
export type BodyDone = (error: Error | null, body?: unknown) => void;

/** What the plain body parser (src/plugins/app/json-body.ts) hands a path that reads bodies. */
export interface JsonBodyParts {
  /** Bytes a body may have: past it, 413. */
  limit: number;
  /** Fastify's secure JSON parser: the errors (and codes) of empty, invalid and poisoned bodies. */
  parseSecurely: (request: FastifyRequest, text: string, done: BodyDone) => void;
  /** False for a route that takes no body: read within the limit, then ignored. */
  takesBody: (request: FastifyRequest) => boolean;
}

/** A Fastify content-type parser that reads the body from the request stream itself. */
export type JsonBodyParser = (request: FastifyRequest, payload: IncomingMessage, done: BodyDone) => void;

/** Fastify's `schemaController.compilersFactory`: what makes the routes' validators and serializers. */
export type SchemaCompilers = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>;

/** What the speed paths that are on hand the plain service. Every member is optional: missing is plain. */
export interface FastPaths {
  /** Sizes V8's heap before the app is built; `watch()` once the service listens. */
  sizeHeap?(nodeFlags: string): { watch(): void };
  /** Stands between Node's HTTP server and Fastify's handler (answer-in-turns). */
  requestListener?(handler: RequestListener): ListenerLayer;
  /** Writes the log lines to stdout, standing in for pino's synchronous destination (batched-log). */
  logDestination?(): DestinationStream;
  /** Registers the two per-request families in `registry`, standing in for prom-client's Counter and Histogram (counted-metrics). */
  requestMetrics?(registry: Registry, buckets: readonly number[], help: RequestMetricsHelp): RequestRecorder;
  /** A cache of verified tokens the token service consults before verifying one (token-cache). */
  verifiedTokens?(): VerifiedTokens;
  /** Reads and parses JSON bodies, standing in for Fastify's reader and secure parse (one-read-body). */
  jsonBodyParser?(parts: JsonBodyParts): JsonBodyParser;
  /** GET /books's answers, standing in for each request reading its own (shared-lists). */
  bookLists?(store: BookStore, tracing: Tracing): BookListAnswers;
  /** For each store opened: a layer around its repository that shares the queries of requests arriving together (batched-queries). */
  shareQueries?(tracing: Tracing): StoreLayer;
  /** For each store opened: the whole list read in large chunks, its JSON written from the database's wire bytes (bulk-lists). */
  bulkLists?(): StoreLayer;
  /** For each store opened: SQLite's writer and keyed creates, sharing one commit per batch (group-commit). */
  groupCommit?(): StoreLayer;

  /** The routes' validators and serializers instead of Fastify's compiling them at startup (precompiled-schemas); undefined: Fastify's. */
  schemaCompilers?(): SchemaCompilers | undefined;
  /** Registered in place of src/plugins/external/openapi.ts: the OpenAPI document and /docs, as `openapiDocument` (lazy-api-reference). */
  apiReference?: FastifyPluginAsync;
}

/** The plain service: no speed path. */
export const NO_FAST_PATHS: FastPaths = Object.freeze({});

/** Loads the room's layers for the names that are on (given to the serve command by src/main.ts). */
export type LoadFastPaths = (names: ReadonlySet<FastPathName>) => Promise<FastPaths>;
