// PostgreSQL failover (issue 12): a private primary with a synchronous standby
// (test/helpers/private-postgres-replication.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithPostgresReplication, startPostgresReplication, type PostgresReplication } from '../helpers/private-postgres-replication.js';

describeWithPostgresReplication('private PostgreSQL primary + synchronous standby (the harness itself)', () => {
  let replication: PostgresReplication;

  beforeAll(async () => {
    replication = await startPostgresReplication();
    console.info(`[postgres-replication] primary + sync standby in ${replication.startupMs} ms`);
  }, 120_000);

  afterAll(async () => {
    await replication?.destroy();
  });

  it('the standby streams synchronously; a committed row is on it; after a primary crash and promotion it takes writes', async () => {
    expect(await replication.syncState()).toBe('sync');
    expect(await replication.inRecovery('primary')).toBe(false);
    expect(await replication.inRecovery('standby')).toBe(true);
    await replication.createDatabase('smoke');
    await replication.query('primary', 'create table t (v int)', [], 'smoke');
    await replication.query('primary', 'insert into t values (1)', [], 'smoke');
    await replication.killPrimary();
    expect(await replication.isRunning('primary')).toBe(false);
    await replication.promoteStandby();
    await replication.query('standby', 'insert into t values (2)', [], 'smoke');
    const rows = await replication.query<{ v: number }>('standby', 'select v from t order by v', [], 'smoke');
    expect(rows.map((row) => row.v)).toEqual([1, 2]);
  });
});
