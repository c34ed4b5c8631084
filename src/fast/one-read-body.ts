// One-read bodies (the speed path one-read-body): a request body that arrived whole with its
// headers is taken from the request stream in one read(), and JSON that cannot poison is parsed
// with plain JSON.parse. Plugged in through FastPaths.jsonBodyParser (src/seams.ts), where it
// stands in for Fastify's own body reader (`parseAs: 'string'`) and its secure JSON parser in
// the plain body parser (src/plugins/app/json-body.ts), with the same limit, errors and codes.
//
// Why one read(): a small body has usually arrived whole, with its headers, before the request is
// answered (answer-in-turns answers a turn's requests after reading them all), and is then taken
// in one read() instead of through listeners, resume() and the 'data' and 'end' events: POST
// /token +4.0 % req/s (docs/benchmarks-changes.md, "POST /token, MariaDB's peak and the list
// wait"). Its parsing still waits for the next tick, as it did behind the 'end' event: the turn's
// requests are all routed before any is answered, which is what makes answering in turns pay
// (done at once instead, the same route was 13 % slower). A body still arriving is read from the
// events, with the same limit and errors as Fastify's own reader.
//
// Why plain JSON.parse: secure-json-parse scans every text twice for `__proto__` and
// `constructor`; a text with neither word nor a backslash cannot hold a key that decodes to
// them, so JSON.parse alone is exact. Parse of the login body 502 → 382–411 ns
// (docs/benchmarks-changes.md, "POST /token per core"). Any other text, an empty one and invalid
// JSON go through Fastify's secure parser, for its errors.
import type { IncomingMessage } from 'node:http';
import { errorCodes, type FastifyRequest } from 'fastify';
import type { BodyDone, JsonBodyParser, JsonBodyParts } from '../seams.js';

/**
 * A key can only decode to `__proto__` or `constructor` if the text holds the word itself or an
 * escape (`"\u005f_proto__"`). A text with neither cannot poison, so plain JSON.parse is enough.
 */
const MAY_POISON = /\\|__proto__|constructor/;

/** The content-type parser of every body (FastPaths.jsonBodyParser). */
export function oneReadBodyParser({ limit, parseSecurely, takesBody }: JsonBodyParts): JsonBodyParser {
  function parse(request: FastifyRequest, text: string, done: BodyDone) {
    if (text.length === 0 || MAY_POISON.test(text)) {
      parseSecurely(request, text, done);
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Invalid JSON: the secure parser fails on it too, with Fastify's error.
      parseSecurely(request, text, done);
      return;
    }
    done(null, value);
  }

  return (request, payload, done) => {
    // A route's own limit (POST /batch's) when it has one, as Fastify's reader does.
    readBody(payload, request.routeOptions.bodyLimit ?? limit, (error, bytes) => {
      if (error) done(error, undefined);
      else if (!takesBody(request)) done(null, undefined);
      else parse(request, bytes!.toString('utf8'), done);
    });
  };
}

/** The whole body as one Buffer, or Fastify's error: too large (413), cut short or broken (400). */
function readBody(message: IncomingMessage, limit: number, done: (error: Error | null, bytes?: Buffer) => void) {
  const declared = Number(message.headers['content-length']);
  if (declared > limit) {
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  // Arrived whole (and its length checked by Node's parser): everything is in the stream's buffer.
  // Answered on the next tick, like Fastify's reader (see the top of this file).
  if (message.complete) {
    const bytes = (message.read() as Buffer | null) ?? EMPTY;
    if (bytes.length > limit) process.nextTick(done, new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    else process.nextTick(done, null, bytes);
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  const stop = () => {
    message.removeListener('data', onData);
    message.removeListener('end', onEnd);
    message.removeListener('error', onEnd);
  };
  function onData(chunk: Buffer) {
    received += chunk.length;
    if (received > limit) {
      stop();
      done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    chunks.push(chunk);
  }
  function onEnd(error?: Error & { statusCode?: number }) {
    stop();
    if (error) {
      if (!(typeof error.statusCode === 'number' && error.statusCode >= 400)) error.statusCode = 400;
      done(error);
      return;
    }
    if (!Number.isNaN(declared) && received !== declared) {
      done(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    done(null, chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
  }
  message.on('data', onData);
  message.on('end', onEnd);
  message.on('error', onEnd);
  message.resume();
}

const EMPTY = Buffer.alloc(0);
