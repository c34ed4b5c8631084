// PostgreSQL failover (issue 12) over a private primary with a synchronous standby
// (test/helpers/infra/postgres-replication.ts) and the built service as child processes,
// DB_URL `postgres://…@primary,standby/db?target_session_attrs=read-write`: under write load
// the primary crashes (SIGKILL), the standby is promoted; the instance serves writes again
// within 30 s without a restart, answers only 2xx or the 503 envelope meanwhile, and every
// write it acknowledged is on the promoted server. An instance listing the standby first
// works on the primary (a read-only host is not usable with target_session_attrs=read-write)
// and follows the promotion too.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { attempt, describeOutcome } from '../helpers/client/attempt.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import {
  acknowledgedBooks,
  acknowledgedProblems,
  isSuccess,
  isUnavailable,
  missingBooks,
  nodesInUse,
  startWriteLoad,
  summary,
  unexpected,
} from '../helpers/client/failover.js';
import type { Book } from '../helpers/client/books.js';
import { startPostgresReplication, type PostgresReplication } from '../helpers/infra/postgres-replication.js';
import { login } from '../helpers/client/api-client.js';
import { describeIf } from '../helpers/requirements.js';

/** From the crash of the primary to writes served again through the promoted standby. */
const FAILOVER_LIMIT_MS = 30_000;
/** How long the primary stays dead before the standby is promoted (the window with no writable host). */
const OUTAGE_MS = 3000;
const QUERY_TIMEOUT_S = 3;

// Requirement: it runs a private PostgreSQL cluster; skipped (reason printed) only outside CI where PostgreSQL's server binaries are missing.
describeIf('pg-binaries')('PostgreSQL failover: primary + synchronous standby, DB_URL listing both with target_session_attrs=read-write', () => {
  let replication: PostgresReplication;
  let primaryFirst: ChildService;
  let standbyFirst: ChildService;
  let token: string;

  beforeAll(async () => {
    replication = await startPostgresReplication();
    console.info(`[postgres failover] primary + sync standby ready in ${replication.startupMs} ms`);
    const database = 'books_failover';
    const url = await replication.createDatabase(database);
    const env = { DB_QUERY_TIMEOUT: String(QUERY_TIMEOUT_S), DB_CONNECT_TIMEOUT: String(QUERY_TIMEOUT_S) };
    primaryFirst = await startService({ childProcess: true, dbUrl: url, env });
    standbyFirst = await startService({ childProcess: true, dbUrl: replication.multiHostUrl(database, ['standby', 'primary']), env });
    token = await login(primaryFirst.baseUrl);
  }, 120_000);

  afterAll(async () => {
    await killAllChildServices();
    await replication?.destroy();
  }, 60_000);

  it('primary SIGKILLed under write load, standby promoted: writes served again within 30 s, only 2xx or the 503 envelope meanwhile, every acknowledged write on the promoted server; the node in use moves', async () => {
    // The standby is synchronous: a commit the primary acknowledges is on the standby too.
    expect(await replication.syncState()).toBe('sync');
    expect(await replication.inRecovery('standby')).toBe(true);
    const { primary, standby } = replication;
    const instances = { primaryFirst, standbyFirst };

    // Both work on the primary: the read-only standby is not usable for read-write sessions.
    for (const [name, instance] of Object.entries(instances)) {
      expect(await nodesInUse(instance.baseUrl), `book_store_node_in_use of ${name} before the crash`).toEqual({ [primary.address]: 1, [standby.address]: 0 });
    }

    const load = startWriteLoad(
      Object.entries(instances).map(([name, instance]) => ({ name, baseUrl: instance.baseUrl, token })),
      { loops: 4, prefix: 'Failover' },
    );
    let killedAt = 0;
    let promoteBegan = 0;
    let promotedAt = 0;
    let outageReadyz: Awaited<ReturnType<typeof attempt>> | undefined;
    try {
      await sleep(3000);
      killedAt = Date.now();
      await replication.killPrimary();
      await sleep(OUTAGE_MS);
      outageReadyz = await attempt(primaryFirst.baseUrl, 'GET', '/readyz');
      promoteBegan = Date.now();
      await replication.promoteStandby();
      promotedAt = Date.now();
      // Until both instances have served a write started after the promotion, then 3 s more.
      const deadline = killedAt + FAILOVER_LIMIT_MS + 5000;
      while (Date.now() < deadline) {
        const back = Object.keys(instances).every((name) =>
          load.writes.some((write) => write.instance === name && write.outcome.startedAt >= promotedAt && isSuccess(write.outcome)),
        );
        if (back) break;
        await sleep(100);
      }
      await sleep(3000);
    } finally {
      await load.stop();
    }
    const writes = load.writes;
    const context = `${writes.length} writes; ${summary(writes.map((write) => write.outcome))}`;
    console.info(`[postgres failover] ${context}; pg_ctl promote began ${promoteBegan - killedAt} ms after the crash and took ${promotedAt - promoteBegan} ms`);

    expect(unexpected(writes.map((write) => write.outcome)), context).toEqual([]);
    expect(acknowledgedProblems(writes), context).toEqual([]);
    expect(outageReadyz?.status, `GET /readyz with no writable host: ${outageReadyz && describeOutcome(outageReadyz)}`).toBe(503);

    for (const name of Object.keys(instances)) {
      const mine = writes.filter((write) => write.instance === name).map((write) => write.outcome);
      expect(mine.filter((o) => o.endedAt < killedAt).length, `${name}: writes before the crash`).toBeGreaterThan(5);
      expect(mine.filter((o) => o.endedAt < killedAt && !isSuccess(o)).map(describeOutcome), `${name} before the crash`).toEqual([]);
      // With no writable host (after the requests in flight have timed out): the 503 envelope only.
      const outage = mine.filter((o) => o.startedAt >= killedAt + QUERY_TIMEOUT_S * 1000 && o.endedAt < promoteBegan);
      expect(outage.filter((o) => !isUnavailable(o)).map(describeOutcome), `${name} while no host is writable`).toEqual([]);
      const firstBack = mine.find((o) => o.startedAt >= promoteBegan && isSuccess(o));
      expect(firstBack, `${name}: no 2xx after the promotion; ${summary(mine)}`).toBeDefined();
      console.info(
        `[postgres failover] ${name}: first 2xx ${firstBack!.endedAt - killedAt} ms after the crash, ${firstBack!.endedAt - promoteBegan} ms after pg_ctl promote began; ${summary(mine.filter((o) => o.startedAt >= killedAt))}`,
      );
      expect(firstBack!.endedAt - killedAt, `${name}: writes served again after the crash`).toBeLessThan(FAILOVER_LIMIT_MS);
      // Once back, it stays back.
      const settled = mine.filter((o) => o.startedAt >= firstBack!.endedAt + 1000);
      expect(settled.length, `${name}: writes after it came back`).toBeGreaterThan(3);
      expect(settled.filter((o) => !isSuccess(o)).map(describeOutcome), `${name} after it came back`).toEqual([]);
    }

    // Every acknowledged write is on the promoted server, exactly as acknowledged.
    const books = acknowledgedBooks(writes);
    expect(books.length).toBeGreaterThan(20);
    const rows = await replication.query<Book>(
      'standby',
      'select id::float8 as id, title, author, year from books where id = any($1::bigint[])',
      [books.map((book) => book.id)],
      'books_failover',
    );
    const onPromoted = new Map(rows.map((row) => [Number(row.id), JSON.stringify({ id: Number(row.id), title: row.title, author: row.author, year: row.year })]));
    expect(books.filter((book) => onPromoted.get(book.id) !== JSON.stringify(book)).map((book) => JSON.stringify(book)), 'acknowledged books not on the promoted server').toEqual([]);
    for (const [name, instance] of Object.entries(instances)) {
      expect(await missingBooks(instance.baseUrl, token, books), `acknowledged books read through ${name}`).toEqual([]);
      expect(await nodesInUse(instance.baseUrl), `book_store_node_in_use of ${name} after the failover`).toEqual({ [primary.address]: 0, [standby.address]: 1 });
      const ready = await attempt(instance.baseUrl, 'GET', '/readyz');
      expect(ready.status, describeOutcome(ready)).toBe(200);
      await instance.assertAlive('after the failover');
    }
  }, 90_000);
});
