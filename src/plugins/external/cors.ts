// CORS (@fastify/cors), only when CORS_ORIGINS is set: preflights allow the headers a browser
// app needs (conditional requests and Idempotency-Key included), and the answers expose the
// request id, Retry-After, the ETag and the replay mark.
import cors from '@fastify/cors';
import fp from 'fastify-plugin';
import type { HttpSettings } from '../../config.js';

export default fp<{ origins: HttpSettings['corsOrigins'] }>(
  async function corsPlugin(app, { origins }) {
    if (!origins) return;
    await app.register(cors, {
      origin: origins,
      methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
      allowedHeaders: ['Authorization', 'Content-Type', 'X-Request-Id', 'Idempotency-Key', 'If-Match', 'If-None-Match'],
      exposedHeaders: ['X-Request-Id', 'Retry-After', 'ETag', 'Idempotent-Replayed', 'Link', 'X-Total-Count', 'X-Total-Count-Estimate', 'Changes-Cursor', 'WWW-Authenticate'],
      maxAge: 600,
      strictPreflight: false, // a bare OPTIONS gets the same 204, not a text/plain 400
    });
  },
  // Its onRequest hook may answer a preflight on its own: the answer's headers are set before it.
  { name: 'cors', dependencies: ['request-headers'] },
);
