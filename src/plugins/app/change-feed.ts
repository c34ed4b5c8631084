// The change feed of this process (src/changes/change-feed.ts), for GET /books/changes and the
// Changes-Cursor of GET /books: `app.changeFeed`. A write this process answered with a 2xx wakes
// it (its change reaches the streams here at once, not at the next poll); stopping the service
// ends every stream cleanly before the server waits for its connections.
import fp from 'fastify-plugin';
import type { Logger } from 'pino';
import { ChangeFeed, type ChangeFeedSettings } from '../../changes/change-feed.js';
import type { Tracing } from '../../tracing/tracing.js';

declare module 'fastify' {
  interface FastifyInstance {
    changeFeed: ChangeFeed;
  }
}

export default fp<{ settings: ChangeFeedSettings; tracing: Tracing }>(
  async function changeFeedPlugin(app, { settings, tracing }) {
    const feed = new ChangeFeed(app.store, settings, app.log as Logger, tracing);
    app.decorate('changeFeed', feed);
    app.addHook('onResponse', (request, reply, done) => {
      if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode >= 200 && reply.statusCode < 300) feed.wake();
      done();
    });
    app.addHook('preClose', (done) => {
      feed.close();
      done();
    });
  },
  { name: 'change-feed', dependencies: ['store'] },
);
