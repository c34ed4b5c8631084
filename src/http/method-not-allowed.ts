// Fastify answers a wrong method with 404 (fastify#917). For every path the service
// serves, the methods it does not serve answer 405 with `Allow`.
import type { HTTPMethods } from 'fastify';
import { Messages, errorEnvelope } from './envelope.js';
import type { App } from './types.js';

const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'];

export type RouteTable = Map<string, Set<string>>;

/** Call before the routes are registered: records every path and its methods. */
export function recordRoutes(app: App): RouteTable {
  const table: RouteTable = new Map();
  app.addHook('onRoute', (route) => {
    // Wildcards (`OPTIONS *` of CORS, static files of /docs) would turn every unknown path into a 405.
    if (route.url.includes('*')) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const known = table.get(route.url) ?? new Set<string>();
    for (const method of methods) known.add(method);
    table.set(route.url, known);
  });
  return table;
}

/** Call after every real route is registered. */
export function registerMethodNotAllowed(app: App, table: RouteTable) {
  for (const [path, allowed] of [...table]) {
    const allowHeader = METHODS.filter((method) => allowed.has(method)).join(', ');
    // hasRoute also catches what onRoute saw under another spelling (plugin prefixes).
    const others = METHODS.filter((method) => !allowed.has(method) && !app.hasRoute({ method, url: path }));
    if (others.length === 0) continue;
    app.route({
      method: others,
      url: path,
      schema: { hide: true }, // not part of the API description
      handler: (_request, reply) =>
        reply.code(405).header('allow', allowHeader).send(errorEnvelope(405, Messages.methodNotAllowed)),
    });
  }
}
