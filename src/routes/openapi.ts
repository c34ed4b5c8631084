// GET /openapi.json: the OpenAPI document of src/plugins/external/openapi.ts. Not part of
// the document itself.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import fp from 'fastify-plugin';

const openapiRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/openapi.json', { schema: { hide: true } }, async (_request, reply) => reply.send(await app.openapiDocument()));
};

export default fp(openapiRoute, { name: 'openapi-route', dependencies: ['openapi'] });
