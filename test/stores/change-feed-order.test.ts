// The change feed's ordering against real concurrency (docs/api.md "The change feed: how it orders
// changes"):
// - the skipped-write trap: a write whose transaction is held open (by another session) while
//   later writes commit and are delivered still reaches a subscriber that already has the later
//   ones, once it commits (a feed of "ids above the last one seen" loses it);
// - replicas: writers create, update and delete concurrently through every instance (two
//   instances on PostgreSQL and on MariaDB, WORKERS=2 on SQLite); subscribers join late, drop
//   their connection at random and resume from their last event id, on any instance; one
//   instance is killed and started again mid-run. Each subscriber's copy, built only from the
//   events in the order received, must equal the store; no event reaches a subscriber twice; no
//   book's version goes backwards.
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { replicaRun } from '../helpers/client/change-replicas.js';
import { ChangeStream } from '../helpers/client/change-stream.js';
import { describeIf } from '../helpers/requirements.js';
import { killAllChildServices, startService, useService, type ChildService } from '../helpers/service/start-service.js';
import type { StoreKind } from '../helpers/stores/dialects.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A connection of the test store's own database, outside the service, for holding a transaction open. */
async function sessionOn(testStore: TestStore): Promise<{ query(sql: string, values?: unknown[]): Promise<unknown>; close(): Promise<void> }> {
  if (testStore.kind === 'postgres') {
    const client = new pg.Client({ connectionString: testStore.url });
    await client.connect();
    return { query: (sql, values) => client.query(sql, values), close: () => client.end() };
  }
  const connection = await createConnection({ uri: testStore.directUrl ?? testStore.url });
  return { query: (sql, values) => connection.query(sql, values), close: () => connection.end() };
}

for (const kind of ['postgres', 'mysql'] as const satisfies readonly StoreKind[]) {
  // Requirement: it needs the shared PostgreSQL or MariaDB server; skipped (reason printed) when DIALECTS leaves it out, or outside CI when it does not answer. SQLite has no trap to set: one writer at a time.
  describeIf(kind)(`${kind}: the skipped-write trap`, () => {
    const service = useService(kind);

    it('a write held open by another session while later writes commit reaches the subscriber after them, once it commits', async () => {
      const client = service.client;
      const token = await client.token();
      const held = await client.createBook(token, { title: 'held', author: 'Trap', year: 1 });
      const cursor = (await client.request('GET', '/books', { token })).headers.get('changes-cursor')!;
      const stream = await ChangeStream.follow(service.current.baseUrl, { token, after: cursor });
      const session = await sessionOn(service.current.testStore);
      try {
        // Its change row is written now (the trigger), in a transaction that stays open.
        await session.query(kind === 'postgres' ? 'begin' : 'start transaction');
        await session.query(`update books set title = 'held, then committed', version = version + 1 where id = ${held.id}`);
        const later: Book[] = [];
        for (let i = 0; i < 3; i++) later.push(await client.createBook(token, { title: `later ${i}`, author: 'Trap', year: 2 }));
        await stream.untilEvents(3);
        await pause(500);
        expect(stream.events.map(({ data }) => data.id)).toEqual(later.map(({ id }) => id));
        await session.query('commit');
        await stream.untilEvents(4);
        expect(stream.events[3]!.event).toBe('updated');
        expect(stream.events[3]!.data).toEqual({ ...held, title: 'held, then committed', version: 2 });
        // And a write waiting on a row lock held by another session: the later writes pass it.
        await session.query(kind === 'postgres' ? 'begin' : 'start transaction');
        await session.query(`select id from books where id = ${held.id} for update`);
        const waiting = client.request('PUT', `/book/${held.id}`, { token, body: { year: 3 } });
        await pause(200);
        const passing = await client.createBook(token, { title: 'passing', author: 'Trap', year: 4 });
        await stream.untilEvents(5);
        expect(stream.events[4]!.data.id).toBe(passing.id);
        await session.query('commit');
        expect((await waiting).status).toBe(200);
        await stream.untilEvents(6);
        await pause(300);
        expect(stream.events.length).toBe(6);
        expect(stream.events[5]!.data).toEqual({ ...held, title: 'held, then committed', year: 3, version: 3 });
      } finally {
        stream.close();
        await session.close();
      }
    });
  });
}

describe('the change feed across instances', () => {
  afterAll(async () => {
    await killAllChildServices();
  });

  for (const kind of ['postgres', 'mysql'] as const satisfies readonly StoreKind[]) {
    // Requirement: it needs the shared PostgreSQL or MariaDB server; skipped (reason printed) when DIALECTS leaves it out, or outside CI when it does not answer.
    describeIf(kind)(kind, () => {
      it('two instances: concurrent writers through both, subscribers that drop and resume on either, one instance killed and restarted', async () => {
        const testStore = await createTestStore(kind);
        const instances: ChildService[] = [];
        try {
          for (let i = 0; i < 2; i++) instances.push(await startService({ childProcess: true, dbUrl: testStore.url }));
          const token = await login(instances[0]!.baseUrl);
          await replicaRun(
            {
              urls: () => instances.map(({ baseUrl }) => baseUrl),
              async killAndRestartOne() {
                const victim = instances.shift()!;
                await victim.stop('SIGKILL');
                instances.push(await startService({ childProcess: true, dbUrl: testStore.url }));
              },
            },
            token,
            kind === 'postgres' ? 7 : 11,
          );
        } finally {
          await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
          await testStore.drop();
        }
      }, 120_000);
    });
  }

  it('SQLite, WORKERS=2: writes through either worker reach the streams of both; the service killed and restarted', async () => {
    const testStore = await createTestStore('sqlite');
    let service: ChildService | undefined;
    try {
      service = await startService({ childProcess: true, dbUrl: testStore.url, env: { WORKERS: '2' } });
      const port = service.port;
      const token = await login(service.baseUrl);
      await replicaRun(
        {
          urls: () => [service!.baseUrl],
          async killAndRestartOne() {
            await service!.stop('SIGKILL');
            service = await startService({ childProcess: true, dbUrl: testStore.url, env: { WORKERS: '2' }, port });
          },
        },
        token,
        13,
      );
    } finally {
      await service?.stop('SIGTERM');
      await testStore.drop();
    }
  }, 120_000);
});
