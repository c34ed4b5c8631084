// The store, for the routes and the metrics: `app.store`. Opening and closing it is the
// caller's (src/server.ts): the app only uses it.
import fp from 'fastify-plugin';
import type { BookStore } from '../../store/book-store.js';

declare module 'fastify' {
  interface FastifyInstance {
    store: BookStore;
  }
}

export default fp<{ store: BookStore }>(
  async function storePlugin(app, { store }) {
    app.decorate('store', store);
  },
  { name: 'store' },
);
