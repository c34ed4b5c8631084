// The store, for the routes and the metrics: `app.store`, and `app.bookLists`, the GET /books
// answers made from it (shared by the requests that arrive together). Opening and closing the
// store is the caller's (src/server.ts): the app only uses it.
import fp from 'fastify-plugin';
import { SharedListAnswers } from '../../http/shared-list.js';
import type { BookStore } from '../../store/book-store.js';
import type { Tracing } from '../../tracing/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    store: BookStore;
    bookLists: SharedListAnswers;
  }
}

export default fp<{ store: BookStore; tracing: Tracing }>(
  async function storePlugin(app, { store, tracing }) {
    app.decorate('store', store);
    app.decorate('bookLists', new SharedListAnswers(store, tracing));
  },
  { name: 'store' },
);
