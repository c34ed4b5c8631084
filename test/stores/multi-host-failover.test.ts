// DB_URL listing several hosts: the service works on the first usable one and, when that one
// dies, moves on to the next without a restart. Here the "first host" is a TCP proxy in front
// of the same database server, which the test cuts (connections reset, port closed) and
// restores; the real clusters (Galera, a promoted PostgreSQL standby) have their own suites.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MYSQL_ADMIN_URL, POSTGRES_ADMIN_URL } from '../helpers/stores/test-store.js';
import { SERVER_STORES, type StoreKind } from '../helpers/stores/dialects.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { ApiClient } from '../helpers/client/api-client.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';
import { startTcpProxy, type TcpProxy } from '../helpers/infra/tcp-proxy.js';
import { freePort } from '../helpers/infra/free-port.js';
import { nodesInUse } from '../helpers/client/failover.js';

/** The test store's URL with `hosts` in place of its own host. */
function withHosts(url: string, hosts: (ownHost: string) => string[]): string {
  const ownHost = new URL(url).host;
  return url.replace(`@${ownHost}/`, `@${hosts(ownHost).join(',')}/`);
}

/** A second "host" for the database server the test stores of `kind` live on. */
function proxyInFrontOf(kind: StoreKind): Promise<TcpProxy> {
  const server = new URL(kind === 'postgres' ? POSTGRES_ADMIN_URL : MYSQL_ADMIN_URL);
  return startTcpProxy(Number(server.port), server.hostname);
}

/** Creates books until one is acknowledged; every status seen on the way. */
async function createUntilAcknowledged(client: ApiClient, token: string, title: string, timeoutMs = 10_000) {
  const statuses: number[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const response = await client.request('POST', '/book', { token, body: { title, author: 'Failover', year: 2001 } });
    statuses.push(response.status);
    if (response.status === 201) return { statuses, book: response.body.data as { id: number } };
    await sleep(100);
  }
  throw new Error(`no create acknowledged within ${timeoutMs} ms: ${statuses.join(',')}`);
}

forEachStore((kind) => {
  describe('two hosts; the first one dies while in use, then comes back', () => {
    let proxy: TcpProxy;
    let service: InProcessService;
    let client: ApiClient;
    let token: string;
    let proxyNode: string;
    let directNode: string;

    beforeAll(async () => {
      proxy = await proxyInFrontOf(kind);
      proxyNode = `127.0.0.1:${proxy.port}`;
      service = await startService({
        kind,
        dbUrlFrom: (url) =>
          withHosts(url, (ownHost) => {
            directNode = ownHost;
            return [proxyNode, ownHost];
          }),
      });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await proxy?.close();
    });

    it('works on the first host while it answers', async () => {
      const book = await client.createBook(token, { title: 'Before', author: 'First Host', year: 1999 });
      expect((await client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);
      expect(await nodesInUse(client.baseUrl)).toEqual({ [proxyNode]: 1, [directNode]: 0 });
    });

    it('when it dies: 503 at most while switching, never 500; then every write lands on the second host', async () => {
      await proxy.cut();
      const { statuses, book } = await createUntilAcknowledged(client, token, 'During');
      expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
      expect(await nodesInUse(client.baseUrl)).toEqual({ [proxyNode]: 0, [directNode]: 1 });
      // Everything acknowledged is there, before and after the switch.
      const list = await client.request('GET', '/books', { token });
      const titles = (list.body.data as Array<{ title: string }>).map((b) => b.title);
      expect(titles).toEqual(expect.arrayContaining(['Before', 'During']));
      for (let i = 0; i < 20; i += 1) {
        expect((await client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);
      }
      expect((await client.request('GET', '/readyz')).status).toBe(200);
    });

    it('stays on the second host when the first one comes back (no flapping)', async () => {
      await proxy.restore();
      await client.createBook(token, { title: 'After', author: 'Second Host', year: 2002 });
      expect(await nodesInUse(client.baseUrl)).toEqual({ [proxyNode]: 0, [directNode]: 1 });
    });
  });

  describe('two hosts; the first one hangs while in use', () => {
    let proxy: TcpProxy;
    let service: InProcessService;
    let client: ApiClient;
    let token: string;

    beforeAll(async () => {
      proxy = await proxyInFrontOf(kind);
      service = await startService({
        kind,
        env: { DB_QUERY_TIMEOUT: '1' },
        dbUrlFrom: (url) => withHosts(url, (ownHost) => [`127.0.0.1:${proxy.port}`, ownHost]),
      });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
      await client.createBook(token, { title: 'Before the hang', author: 'First Host', year: 1999 });
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await proxy?.close();
    });

    it('a query on it ends with 503 within DB_QUERY_TIMEOUT, and the next requests are served by the second host', async () => {
      proxy.freeze();
      const started = Date.now();
      const { statuses } = await createUntilAcknowledged(client, token, 'After the hang');
      expect(statuses.filter((status) => status !== 201 && status !== 503)).toEqual([]);
      // At most one query timeout per pooled connection, not a hang.
      expect(Date.now() - started).toBeLessThan(8_000);
      const nodes = await nodesInUse(client.baseUrl);
      expect(nodes[`127.0.0.1:${proxy.port}`]).toBe(0);
    });
  });

  describe('one host, which dies and comes back', () => {
    let proxy: TcpProxy;
    let service: InProcessService;
    let client: ApiClient;
    let token: string;

    beforeAll(async () => {
      proxy = await proxyInFrontOf(kind);
      service = await startService({ kind, dbUrlFrom: (url) => withHosts(url, () => [`127.0.0.1:${proxy.port}`]) });
      client = new ApiClient(service.baseUrl);
      token = await client.token();
    }, 60_000);

    afterAll(async () => {
      await service?.stop();
      await proxy?.close();
    });

    it('answers 503 (readiness and books) while it is gone, and recovers by itself when it returns', async () => {
      const book = await client.createBook(token, { title: 'Kept', author: 'One Host', year: 1990 });
      await proxy.cut();
      expect((await client.request('GET', '/readyz')).status).toBe(503);
      for (const [method, path] of [
        ['GET', `/book/${book.id}`],
        ['GET', '/books'],
        ['POST', '/book'],
      ] as const) {
        const response = await client.request(method, path, { token, body: method === 'POST' ? { title: 't', author: 'a', year: 1 } : undefined });
        expect(response.status, `${method} ${path}`).toBe(503);
      }
      await proxy.restore();
      expect((await client.request('GET', '/readyz')).status).toBe(200);
      expect((await client.request('GET', `/book/${book.id}`, { token })).body.data).toMatchObject({ title: 'Kept' });
    });
  });

  describe('the connection is lost halfway through the first migration', () => {
    let proxy: TcpProxy;
    let service: InProcessService;

    afterAll(async () => {
      await service?.stop();
      await proxy?.close();
    });

    it('startup tries again (the table made, its migration not yet recorded) and serves', async () => {
      proxy = await proxyInFrontOf(kind);
      // The books table is created; the row recording it never arrives, the connections drop.
      const quote = kind === 'postgres' ? '"' : '`';
      proxy.cutOnceAt(`insert into ${quote}book_service_migrations${quote}`);
      service = await startService({ kind, dbUrlFrom: (url) => withHosts(url, () => [`127.0.0.1:${proxy.port}`]) });
      expect(service.logs.join('')).toMatch(/failed halfway; retrying/);
      const client = new ApiClient(service.baseUrl);
      const token = await client.token();
      const book = await client.createBook(token, { title: 'Migrated', author: 'Twice', year: 2024 });
      expect((await client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);
    });
  });

  describe('the first host listed is down at startup', () => {
    let service: InProcessService;

    afterAll(async () => {
      await service?.stop();
    });

    it('the service starts on the next one and serves', async () => {
      const closedPort = await freePort();
      service = await startService({ kind, dbUrlFrom: (url) => withHosts(url, (ownHost) => [`127.0.0.1:${closedPort}`, ownHost]) });
      const client = new ApiClient(service.baseUrl);
      const token = await client.token();
      await client.createBook(token, { title: 'Started', author: 'Second Host', year: 2020 });
      const nodes = await nodesInUse(client.baseUrl);
      expect(nodes[`127.0.0.1:${closedPort}`]).toBe(0);
      expect(Object.values(nodes).sort()).toEqual([0, 1]);
    });
  });
}, SERVER_STORES);
