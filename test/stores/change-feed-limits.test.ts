// The change feed's bounds (docs/api.md "GET /books/changes"): once 1 MiB waits for a client
// nothing more is queued for it, and a client that then takes nothing for STALLED_MS is dropped,
// while a client that reads (however far behind a burst leaves it) gets every event and writes
// answer as usual; 1,000 idle streams on one process cost little memory (measured here and in
// docs/operations.md).
import { connect, type Socket } from 'node:net';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_BUFFERED_BYTES, STALLED_MS } from '../../src/changes/change-feed.js';
import { ApiClient } from '../helpers/client/api-client.js';
import { ChangeStream } from '../helpers/client/change-stream.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';

/** A GET /books/changes on a raw socket that never reads what it is sent (the kernel's buffers fill, then Node's). */
function stuckReader(port: number, token: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /books/changes HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${token}\r\n\r\n`);
      socket.pause();
      resolve(socket);
    });
    socket.on('error', () => undefined);
    socket.once('error', reject);
  });
}

describe('the change feed under a reader that stops reading, and 1,000 idle streams (SQLite)', () => {
  let service: InProcessService;
  let client: ApiClient;
  let token: string;
  beforeAll(async () => {
    service = await startService({ kind: 'sqlite', env: { CHANGES_MAX_STREAMS: '2000' } });
    client = new ApiClient(service.baseUrl);
    token = await client.token();
  });
  afterAll(async () => {
    await service?.stop();
  });

  it('a reader that stops reading is dropped once 1 MiB waits for it and it takes nothing for 10 s; a reading stream gets every one of a 20,000-change burst; writes answer meanwhile', async () => {
    const port = Number(new URL(service.baseUrl).port);
    const reading = await ChangeStream.follow(service.baseUrl, { token });
    const stuck = await stuckReader(port, token);
    await expect.poll(() => service.app.changeFeed.openStreams).toBe(2);
    // 20,000 changes of 300-byte books in one transaction, written beside the service (another
    // connection to its file): about 7 MB of events for each stream.
    const file = service.testStore.url.replace(/^sqlite:/, '');
    const database = new Database(file);
    const title = 'A long title that makes each event large. '.repeat(7);
    database.transaction(() => {
      const insert = database.prepare('insert into books (title, author, year) values (?, ?, ?)');
      for (let i = 0; i < 20_000; i++) insert.run(`${title}${i}`, 'Slow Reader', i % 2000);
    })();
    database.close();
    await expect.poll(() => service.app.changeFeed.streamsDropped, { timeout: STALLED_MS + 20_000 }).toBe(1);
    expect(service.app.changeFeed.openStreams).toBe(1);
    // A write through the service answers as usual while the feed hands out the rest.
    const started = Date.now();
    const book = await client.createBook(token, { title: 'after the flood', author: 'Writer', year: 1 });
    expect(Date.now() - started).toBeLessThan(2_000);
    await reading.until(() => reading.events.at(-1)?.data.id === book.id, 30_000, 'the last event');
    expect(reading.events.length).toBe(20_001);
    expect(new Set(reading.events.map(({ id }) => id)).size).toBe(20_001);
    // The stuck client's connection was closed by the service: reading it now ends.
    const ended = new Promise<void>((resolve) => stuck.once('close', () => resolve()));
    stuck.resume();
    await ended;
    reading.close();
    expect([MAX_BUFFERED_BYTES, STALLED_MS]).toEqual([1024 * 1024, 10_000]);
  }, 90_000);

  it('1,000 idle streams on one process: its memory measured (RSS and heap, from its /metrics), every one served by the next write', async () => {
    // A process of its own: the clients' memory is not the service's.
    const child = await startService({ childProcess: true, dbUrl: service.testStore.url.replace('.db', '-idle.db'), env: { CHANGES_MAX_STREAMS: '2000' } });
    try {
      const childToken = await new ApiClient(child.baseUrl).token();
      const memory = async () => {
        const metrics = await (await fetch(`${child.baseUrl}/metrics`)).text();
        const value = (name: string) => Number(new RegExp(`^${name} (\\S+)`, 'm').exec(metrics)?.[1]);
        return { rss: value('process_resident_memory_bytes'), heap: value('nodejs_heap_size_used_bytes'), streams: value('book_change_streams') };
      };
      const before = await memory();
      const streams: ChangeStream[] = [];
      for (let i = 0; i < 1_000; i++) streams.push(await ChangeStream.follow(child.baseUrl, { token: childToken }));
      await expect.poll(async () => (await memory()).streams).toBe(1_000);
      const after = await memory();
      const book = await new ApiClient(child.baseUrl).createBook(childToken, { title: 'one for all', author: 'Feed', year: 1 });
      for (const stream of streams) await stream.until(() => stream.events.some((event) => event.data.id === book.id), 10_000, 'the write');
      for (const stream of streams) stream.close();
      const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
      console.info(
        `[change feed] 1,000 idle streams: RSS ${mib(before.rss)} → ${mib(after.rss)} MiB (+${mib(after.rss - before.rss)}), heap used ${mib(before.heap)} → ${mib(after.heap)} MiB`,
      );
      expect(after.rss - before.rss).toBeLessThan(100 * 2 ** 20);
    } finally {
      await child.stop('SIGTERM');
    }
  }, 120_000);
});
