// Request bodies: JSON whatever the Content-Type (clients that forget the header still work;
// request-headers.ts declares every body JSON), through Fastify's secure parser, which refuses
// `__proto__` and `constructor.prototype` keys. Routes that take no body (GET, DELETE) ignore
// whatever a client sends along.
import fp from 'fastify-plugin';

export default fp(
  async function jsonBody(app) {
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, parsed) => {
      if (request.routeOptions.config.invalidBodyMessage === undefined) return parsed(null, undefined);
      return parseJson(request, body as string, parsed);
    });
  },
  { name: 'json-body' },
);
