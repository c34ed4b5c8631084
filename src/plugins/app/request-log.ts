// One log line per finished request (an onResponse hook); Fastify's own request logging is
// off (app.ts).
//
// The line is written by hand when the logger is a plain pino logger (src/logger.ts): byte for
// byte what `request.log.info({ method, route, url, status, durationMs, invalid }, 'request
// completed')` writes (level, time, the logger's bindings, reqId, the fields, msg), straight to
// the logger's destination (a lone surrogate in `invalid` would be escaped, where pino writes it raw;
// request URLs cannot hold one). That skips pino's generic serializer (a loop over the object's keys
// with a serializer, redaction and type check per key) and, with the lazy child logger of
// src/logger.ts, the child logger Fastify would otherwise build for every request. A logger with
// anything that changes the line (a mixin, formatters, hooks, another time function or message
// key) takes pino's own path.
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { pino, type Logger } from 'pino';
import { bodyProblemOf } from '../../http/errors.js';
import { lazyChildLoggerFactory, parentLogger } from '../../logger.js';

const MESSAGE = 'request completed';
const INFO = 30;

/** The request's log line. */
export function logFinishedRequest(request: FastifyRequest, reply: FastifyReply) {
  const url = request.url.length > 256 ? `${request.url.slice(0, 256)}…` : request.url;
  const durationMs = Math.round(reply.elapsedTime * 100) / 100;
  const invalid = bodyProblemOf(request); // a refused body: which field and why
  const root = parentLogger(request.log);
  const writer = root === undefined ? undefined : lineWriterOf(root);
  if (writer !== undefined) {
    if (writer.enabled()) writer.write(request.id, request.method, request.routeOptions.url, url, reply.statusCode, durationMs, invalid);
    return;
  }
  request.log.info(
    { method: request.method, route: request.routeOptions.url, url, status: reply.statusCode, durationMs, invalid },
    MESSAGE,
  );
}

interface LineWriter {
  enabled(): boolean;
  write(reqId: string, method: string, route: string | undefined, url: string, status: number, durationMs: number, invalid: string | undefined): void;
}

const writers = new WeakMap<FastifyBaseLogger, LineWriter | null>();

function lineWriterOf(logger: FastifyBaseLogger): LineWriter | undefined {
  let writer = writers.get(logger);
  if (writer === undefined) {
    writer = makeLineWriter(logger as unknown as Logger);
    writers.set(logger, writer);
  }
  return writer ?? undefined;
}

/** The hand-written line's writer for a plain pino logger; null for any other logger. */
function makeLineWriter(logger: Logger): LineWriter | null {
  const s = pino.symbols as typeof pino.symbols & Record<string, symbol>;
  const internals = logger as unknown as Record<symbol, unknown>;
  const formatters = internals[s.formattersSym] as { log?: unknown; level?: unknown } | undefined;
  const hooks = internals[s.hooksSym] as { streamWrite?: unknown } | undefined;
  const stream = internals[s.streamSym] as { write(line: string): unknown } | undefined;
  const chindings = internals[s.chindingsSym];
  const lsCache = internals[s.lsCacheSym] as Record<number, string> | undefined;
  const plain =
    typeof chindings === 'string' &&
    stream !== undefined &&
    typeof stream.write === 'function' &&
    (stream as Record<symbol, unknown>)[Symbol.for('pino.metadata')] !== true &&
    lsCache?.[INFO] === `{"level":${INFO}` &&
    internals[s.mixinSym] == null &&
    formatters?.log === undefined &&
    hooks?.streamWrite === undefined &&
    internals[s.timeSym] === pino.stdTimeFunctions.epochTime &&
    internals[s.messageKeySym] === 'msg' &&
    !internals[s.nestedKeySym] &&
    logger.levels.values.info === INFO;
  if (!plain) return null;
  const head = `{"level":${INFO},"time":`;
  const tail = `,"msg":${JSON.stringify(MESSAGE)}}\n`;
  return {
    enabled: () => logger.levelVal <= INFO,
    write(reqId, method, route, url, status, durationMs, invalid) {
      // The bindings are read on every line: logger.setBindings() may change them.
      const bindings = internals[s.chindingsSym] as string;
      stream.write(
        head +
          Date.now() +
          bindings +
          ',"reqId":' +
          JSON.stringify(reqId) +
          ',"method":' +
          JSON.stringify(method) +
          (route === undefined ? '' : ',"route":' + JSON.stringify(route)) +
          ',"url":' +
          JSON.stringify(url) +
          ',"status":' +
          status +
          ',"durationMs":' +
          (Number.isFinite(durationMs) ? durationMs : 'null') +
          (invalid === undefined ? '' : ',"invalid":' + JSON.stringify(invalid)) +
          tail,
      );
    },
  };
}

export default fp(
  async function requestLog(app) {
    // Every route registered after this plugin (all of them: app.ts) makes request.log lazily.
    app.setChildLoggerFactory(lazyChildLoggerFactory);
    app.addHook('onResponse', (request, reply, next) => {
      logFinishedRequest(request, reply);
      next();
    });
  },
  { name: 'request-log' },
);
