// Request bodies: JSON whatever the Content-Type (clients that forget the header still work;
// request-headers.ts declares every body JSON). `__proto__` and `constructor.prototype` keys are
// refused, as by Fastify's secure parser. Routes that take no body (DELETE) ignore whatever a
// client sends along, within the body limit.
//
// The body is read here, not by Fastify (`parseAs`): a small body has usually arrived whole,
// with its headers, before the request is answered (the HTTP server answers a turn's requests
// after reading them all, src/http/node/turns.ts), and is then taken from the request stream in
// one read() instead of through listeners, resume() and the 'data' and 'end' events (POST /token:
// +4 % req/s, docs/benchmarks-changes.md). Its parsing still waits for the next tick, as it did
// behind the 'end' event: the turn's requests are all routed before any is answered, which is
// what makes answering in turns pay (done at once instead, the same route was 13 % slower). A
// body still arriving is read from the events, with the same limit and errors as Fastify's own
// reader.
import type { IncomingMessage } from 'node:http';
import { errorCodes, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

/**
 * A key can only decode to `__proto__` or `constructor` if the text holds the word itself or an
 * escape (`"\u005f_proto__"`). A text with neither cannot poison, so plain JSON.parse is enough;
 * any other text goes through Fastify's secure parser, as before.
 */
const MAY_POISON = /\\|__proto__|constructor/;

type Done = (error: Error | null, body?: unknown) => void;

export default fp(
  async function jsonBody(app) {
    // Also the one source of the errors (empty body, invalid JSON, poisoning) and their codes.
    const parseJsonSecurely = app.getDefaultJsonParser('error', 'error');
    const limit = app.initialConfig.bodyLimit ?? 1024 * 1024;

    function parse(request: FastifyRequest, text: string, done: Done) {
      if (text.length === 0 || MAY_POISON.test(text)) {
        parseJsonSecurely(request, text, done);
        return;
      }
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        // Invalid JSON: the secure parser fails on it too, with Fastify's error.
        parseJsonSecurely(request, text, done);
        return;
      }
      done(null, value);
    }

    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (request, payload, done) => {
      const takesBody = request.routeOptions.config.invalidBodyMessage !== undefined;
      readBody(payload as IncomingMessage, limit, (error, bytes) => {
        if (error) done(error, undefined);
        else if (!takesBody) done(null, undefined);
        else parse(request, bytes!.toString('utf8'), done);
      });
    });
  },
  { name: 'json-body' },
);

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
