// Request bodies: JSON whatever the Content-Type (clients that forget the header still work;
// request-headers.ts declares every body JSON). `__proto__` and `constructor.prototype` keys are
// refused, as by Fastify's secure parser. Routes that take no body (GET, DELETE) ignore whatever
// a client sends along.
import fp from 'fastify-plugin';

/**
 * A key can only decode to `__proto__` or `constructor` if the text holds the word itself or an
 * escape (`"\u005f_proto__"`). A text with neither cannot poison, so plain JSON.parse is enough;
 * any other text goes through Fastify's secure parser, as before.
 */
const MAY_POISON = /\\|__proto__|constructor/;

export default fp(
  async function jsonBody(app) {
    // Also the one source of the errors (empty body, invalid JSON, poisoning) and their codes.
    const parseJsonSecurely = app.getDefaultJsonParser('error', 'error');
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (request, body, parsed) => {
      if (request.routeOptions.config.invalidBodyMessage === undefined) return parsed(null, undefined);
      const text = body as string;
      if (text.length === 0 || MAY_POISON.test(text)) return parseJsonSecurely(request, text, parsed);
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        // Invalid JSON: the secure parser fails on it too, with Fastify's error.
        return parseJsonSecurely(request, text, parsed);
      }
      return parsed(null, value);
    });
  },
  { name: 'json-body' },
);
