// GET /books/changes and Changes-Cursor (docs/api.md "GET /books/changes", "List, then follow"):
// every committed write of a book is an event, in commit order, exactly once; a client resumes
// with Last-Event-ID or `after` without a gap; a list's Changes-Cursor, followed, yields exactly
// the changes after the list; writes that write nothing emit nothing; bad cursors are 400, pruned
// ones 410, one stream too many 503; stopping the service ends every stream cleanly.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeChangeCursor, decodeChangeCursor } from '../../src/changes/change-cursor.js';
import type { Book } from '../helpers/client/books.js';
import { ChangeStream, type Refused } from '../helpers/client/change-stream.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { startService, useService, type InProcessService } from '../helpers/service/start-service.js';
import { ApiClient } from '../helpers/client/api-client.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

forEachStore((kind) => {
  describe('GET /books/changes', () => {
    const service = useService(kind);
    let token: string;
    const streams: ChangeStream[] = [];
    beforeAll(async () => {
      token = await service.client.token();
    });
    afterAll(() => {
      for (const stream of streams) stream.close();
    });

    async function follow(options: { after?: string; lastEventId?: string } = {}): Promise<ChangeStream> {
      const stream = await ChangeStream.follow(service.current.baseUrl, { token, ...options });
      streams.push(stream);
      return stream;
    }

    /** The Changes-Cursor of a list answer. */
    async function listCursor(query = ''): Promise<string> {
      const response = await service.client.request('GET', `/books${query}`, { token });
      expect(response.status).toBe(200);
      const cursor = response.headers.get('changes-cursor');
      expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
      return cursor!;
    }

    const create = (title: string) => service.client.createBook(token, { title, author: 'Feed', year: 2001 });

    it('a list\'s Changes-Cursor, followed, yields exactly the writes after the list, in order, as events with the book and its version', async () => {
      await create('before the list');
      const cursor = await listCursor();
      const stream = await follow({ after: cursor });
      expect(stream.response.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(stream.response.headers['cache-control']).toBe('no-cache, no-transform');
      expect(stream.response.headers['x-content-type-options']).toBe('nosniff');
      const book = await create('Solaris');
      const updated = await service.client.request('PUT', `/book/${book.id}`, { token, body: { year: 1961 } });
      expect(updated.status).toBe(200);
      expect((await service.client.request('DELETE', `/book/${book.id}`, { token })).status).toBe(200);
      await stream.untilEvents(3);
      await pause(300);
      expect(stream.events.map(({ event, data }) => [event, data])).toEqual([
        ['created', { ...book, version: 1 }],
        ['updated', { ...book, year: 1961, version: 2 }],
        ['deleted', { id: book.id, version: 2 }],
      ]);
      expect(stream.retry).toBe(1000);
      // Each event's id is a cursor: distinct, and each one after the one before.
      const positions = stream.events.map(({ id }) => decodeChangeCursor(id)!.position);
      expect(positions.every((position, i) => i === 0 || position > positions[i - 1]!)).toBe(true);
    });

    it('every list answer carries Changes-Cursor: a page, a search, a sort', async () => {
      for (const query of ['', '?limit=1', '?q=solaris', '?sort=-year', '?sort=title&limit=2']) await listCursor(query);
      // A bad parameter is a 400 without one.
      const bad = await service.client.request('GET', '/books?limit=0', { token });
      expect(bad.status).toBe(400);
      expect(bad.headers.get('changes-cursor')).toBeNull();
    });

    it('a stream without a cursor starts now: only later writes', async () => {
      await create('not in the stream');
      const stream = await follow();
      const later = await create('in the stream');
      await stream.untilEvents(1);
      await pause(300);
      expect(stream.events.map(({ data }) => data)).toEqual([{ ...later, version: 1 }]);
    });

    it('resumes without a gap or a repeat from Last-Event-ID or after=, Last-Event-ID first', async () => {
      const cursor = await listCursor();
      const books: Book[] = [];
      for (let i = 0; i < 5; i++) books.push(await create(`resume ${i}`));
      const first = await follow({ after: cursor });
      await first.untilEvents(5);
      first.close();
      const fromSecond = first.events[1]!.id;
      for (const options of [{ lastEventId: fromSecond }, { after: fromSecond }, { lastEventId: fromSecond, after: cursor }]) {
        const resumed = await follow(options);
        await resumed.untilEvents(3);
        await pause(200);
        expect(resumed.events.map(({ data }) => data.id)).toEqual(books.slice(2).map(({ id }) => id));
        expect(resumed.events.map(({ id }) => id)).toEqual(first.events.slice(2).map(({ id }) => id));
        resumed.close();
      }
    });

    it('writes that write nothing emit nothing: a replayed Idempotency-Key, a failed If-Match, an empty update, a 404', async () => {
      const book = await create('quiet');
      const stream = await follow({ after: await listCursor() });
      const keyed = { token, body: { title: 'keyed', author: 'Feed', year: 2002 }, headers: { 'idempotency-key': `quiet-${kind}` } };
      const firstTime = await service.client.request('POST', '/book', keyed);
      expect((await service.client.request('POST', '/book', keyed)).headers.get('idempotent-replayed')).toBe('true');
      expect((await service.client.request('PUT', `/book/${book.id}`, { token, body: { year: 1 }, headers: { 'if-match': '"0-0"' } })).status).toBe(412);
      expect((await service.client.request('PUT', `/book/${book.id}`, { token, body: {} })).status).toBe(200);
      expect((await service.client.request('DELETE', '/book/999999999', { token })).status).toBe(404);
      const marker = await create('marker');
      await stream.untilEvents(2);
      await pause(300);
      expect(stream.events.map(({ data }) => data.id)).toEqual([(firstTime.body.data as Book).id, marker.id]);
    });

    it('a cursor never issued is a 400, whether malformed, of another database, or ahead of every change', async () => {
      const { feedId, position } = decodeChangeCursor(await listCursor())!;
      const otherFeed = feedId === '0123456789abcdef' ? 'fedcba9876543210' : '0123456789abcdef';
      const cursors = [
        'not a cursor',
        'x',
        Buffer.from(`${feedId}.${position}`).toString('base64'), // padded base64: another spelling
        encodeChangeCursor({ feedId: otherFeed, position }),
        encodeChangeCursor({ feedId, position: position + 1_000_000n }),
        Buffer.from(`${feedId}.-1`).toString('base64url'),
      ];
      for (const cursor of cursors) {
        for (const options of [{ after: cursor }, { lastEventId: cursor }]) {
          const refused = (await ChangeStream.open(service.current.baseUrl, { token, ...options })) as Refused;
          expect(refused.status, cursor).toBe(400);
          expect(refused.headers['content-type']).toBe('application/json; charset=utf-8');
          expect(refused.body).toEqual({ status: 400, message: 'Invalid change cursor: not issued by this service', data: null });
        }
      }
    });

    it('needs a token, like every book route', async () => {
      const refused = (await ChangeStream.open(service.current.baseUrl, { token: '' })) as Refused;
      expect(refused.status).toBe(401);
      expect(refused.body.message).toBe('Authorization token required');
    });
  });

  describe('GET /books/changes: what is kept, how many streams, shutdown', () => {
    let service: InProcessService;
    let client: ApiClient;
    let token: string;
    beforeAll(async () => {
      service = await startService({ kind, env: { CHANGES_RETENTION: '0.5', CHANGES_MAX_STREAMS: '2' } });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
    });
    afterAll(async () => {
      await service?.stop();
    });

    /** The server lets go of a stream when it sees its connection close. */
    const untilNoStreams = () => expect.poll(() => service.app.changeFeed.openStreams).toBe(0);

    it('a cursor older than CHANGES_RETENTION is a 410 telling the client to list again; the list\'s new cursor works', async () => {
      const old = (await client.request('GET', '/books', { token })).headers.get('changes-cursor')!;
      // Two changes: the prune deletes every old one but the newest.
      await client.createBook(token, { title: 'soon pruned', author: 'Feed', year: 1 });
      await client.createBook(token, { title: 'kept as the newest', author: 'Feed', year: 1 });
      // Pruned at most every second once older than half a second.
      const deadline = Date.now() + 10_000;
      let refused: ChangeStream | Refused;
      for (;;) {
        refused = await ChangeStream.open(service.baseUrl, { token, after: old });
        if (refused instanceof ChangeStream) refused.close();
        else if (refused.status !== 503) break; // 503: the streams just closed are not let go of yet
        if (Date.now() > deadline) break;
        await pause(250);
      }
      expect(refused).not.toBeInstanceOf(ChangeStream);
      expect((refused as Refused).status).toBe(410);
      expect((refused as Refused).body).toEqual({ status: 410, message: 'Change cursor expired: list the books again', data: null });
      const fresh = (await client.request('GET', '/books', { token })).headers.get('changes-cursor')!;
      const stream = await ChangeStream.follow(service.baseUrl, { token, after: fresh });
      stream.close();
    });

    it('one stream more than CHANGES_MAX_STREAMS is a 503 envelope with Retry-After; a closed stream frees its place', async () => {
      await untilNoStreams();
      const first = await ChangeStream.follow(service.baseUrl, { token });
      const second = await ChangeStream.follow(service.baseUrl, { token });
      const third = (await ChangeStream.open(service.baseUrl, { token })) as Refused;
      expect(third.status).toBe(503);
      expect(third.headers['retry-after']).toBe('1');
      expect(third.body).toEqual({ status: 503, message: 'Service unavailable', data: null });
      second.close();
      await expect.poll(() => service.app.changeFeed.openStreams).toBe(1);
      const again = await ChangeStream.follow(service.baseUrl, { token });
      // Stopping the service ends every stream cleanly (not a cut connection).
      await service.stop();
      await first.until(() => first.state !== 'open', 5_000, 'the end of the stream');
      await again.until(() => again.state !== 'open', 5_000, 'the end of the stream');
      expect([first.state, again.state]).toEqual(['ended', 'ended']);
    });
  });
});
