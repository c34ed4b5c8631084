// The store, for the routes and the metrics: `app.store`, and `app.bookLists`, the GET /books
// answers made from it (src/http/book-list.ts, or the speed path that shares them between
// requests, when `bookLists` is given). Opening and closing the store is the caller's
// (src/server.ts): the app only uses it.
import fp from 'fastify-plugin';
import { listAnswers, type BookListAnswers } from '../../http/book-list.js';
import type { BookStore } from '../../store/book-store.js';

declare module 'fastify' {
  interface FastifyInstance {
    store: BookStore;
    bookLists: BookListAnswers;
  }
}

export default fp<{ store: BookStore; bookLists?: BookListAnswers }>(
  async function storePlugin(app, { store, bookLists }) {
    app.decorate('store', store);
    app.decorate('bookLists', bookLists ?? listAnswers(store));
  },
  { name: 'store' },
);
