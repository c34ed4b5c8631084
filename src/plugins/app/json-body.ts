// Request bodies: JSON whatever the Content-Type (clients that forget the header still work;
// request-headers.ts declares every body JSON), through Fastify's secure parser, which refuses
// `__proto__` and `constructor.prototype` keys. Routes that take no body (DELETE) ignore
// whatever a client sends along, within the body limit. Fastify reads the body (`parseAs`), with
// its limit (413) and errors (400); a speed path may stand in for the reading and the parse
// (FastPaths.jsonBodyParser), with the same limit and errors.
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastPaths, JsonBodyParts } from '../../seams.js';

export interface JsonBodyOptions {
  /** Reads and parses bodies instead of Fastify (FastPaths.jsonBodyParser); Fastify's reader unless given. */
  jsonBodyParser?: FastPaths['jsonBodyParser'];
}

/** Routes that take a body say what to answer when it is invalid (src/http/errors.ts). */
function takesBody(request: FastifyRequest): boolean {
  return request.routeOptions.config.invalidBodyMessage !== undefined;
}

export default fp<JsonBodyOptions>(
  async function jsonBody(app, { jsonBodyParser }) {
    // Also the one source of the errors (empty body, invalid JSON, poisoning) and their codes.
    const parseSecurely = app.getDefaultJsonParser('error', 'error');
    const parts: JsonBodyParts = { limit: app.initialConfig.bodyLimit ?? 1024 * 1024, parseSecurely, takesBody };
    // '*' is the catch-all: it parses every media type (and no Content-Type at all) as JSON.
    app.removeAllContentTypeParsers();
    const parser = jsonBodyParser?.(parts);
    if (parser) {
      app.addContentTypeParser('*', parser);
      return;
    }
    app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
      if (!takesBody(request)) {
        done(null, undefined);
        return;
      }
      parseSecurely(request, body as string, done);
    });
  },
  { name: 'json-body' },
);
