// The OpenAPI document (GET /openapi.json, src/routes/openapi.ts) and the reference page under
// /docs: @fastify/swagger and @fastify/swagger-ui registered in the app with the options of
// ./api-reference.ts. Swagger notes every route registered after this plugin; the page's
// routes get the app's hooks (headers, log line, metrics) like any other.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { DOCUMENT_OPTIONS, PAGE_OPTIONS } from './api-reference.js';

async function openapi(app: FastifyInstance) {
  await app.register(swagger, DOCUMENT_OPTIONS);
  await app.register(swaggerUi, PAGE_OPTIONS);
  app.decorate('openapiDocument', async () => app.swagger());
}

export default fp(openapi, { name: 'openapi' });
