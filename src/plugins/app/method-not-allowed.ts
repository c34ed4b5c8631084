// Fastify answers a wrong method with 404 (fastify#917). For every path the service serves,
// the methods it does not serve answer 405 with `Allow`. Two plugins, one on each side of the
// routes: `routeTable` first of all, so that it notes every route registered after it, and
// `methodNotAllowed` last, once there is no route left to note.
import type { HTTPMethods } from 'fastify';
import fp from 'fastify-plugin';
import { Messages, errorEnvelope } from '../../http/envelope.js';

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

declare module 'fastify' {
  interface FastifyInstance {
    /** Every path a route serves, and its methods. */
    routeTable: Map<string, Set<string>>;
  }
}

export const routeTable = fp(
  async function routeTable(app) {
    const table = new Map<string, Set<string>>();
    app.decorate('routeTable', table);
    app.addHook('onRoute', (route) => {
      // Wildcards (`OPTIONS *` of CORS, static files of /docs) would turn every unknown path into a 405.
      if (route.url.includes('*')) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      const known = table.get(route.url) ?? new Set<string>();
      for (const method of methods) known.add(method);
      table.set(route.url, known);
    });
  },
  { name: 'route-table' },
);

export const methodNotAllowed = fp(
  async function methodNotAllowed(app) {
    for (const [path, noted] of [...app.routeTable]) {
      // hasRoute also catches what onRoute saw under another spelling (plugin prefixes: the GET
      // of `/docs/` is noted as `/docs`, its HEAD as `/docs/`).
      const allowed = METHODS.filter((method) => noted.has(method) || app.hasRoute({ method, url: path }));
      const others = METHODS.filter((method) => !allowed.includes(method));
      if (others.length === 0) continue;
      const allowHeader = allowed.join(', ');
      app.route({
        method: others,
        url: path,
        schema: { hide: true }, // not part of the API description
        handler: (_request, reply) =>
          reply.code(405).header('allow', allowHeader).send(errorEnvelope(405, Messages.methodNotAllowed)),
      });
    }
  },
  { name: 'method-not-allowed', dependencies: ['route-table'] },
);
