// CORS (@fastify/cors), only when CORS_ORIGINS is set: preflights allow the headers a browser
// app needs, and the answers expose the request id and Retry-After.
import cors from '@fastify/cors';
import fp from 'fastify-plugin';
import type { HttpSettings } from '../../config.js';

export default fp<{ origins: HttpSettings['corsOrigins'] }>(
  async function corsPlugin(app, { origins }) {
    if (!origins) return;
    await app.register(cors, {
      origin: origins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id'],
      exposedHeaders: ['X-Request-Id', 'Retry-After'],
      maxAge: 600,
      strictPreflight: false, // a bare OPTIONS gets the same 204, not a text/plain 400
    });
  },
  // Its onRequest hook may answer a preflight on its own: the answer's headers are set before it.
  { name: 'cors', dependencies: ['request-headers'] },
);
