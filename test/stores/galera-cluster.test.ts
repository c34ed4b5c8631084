// MariaDB Galera cluster (issue 12): a private 3-node cluster (test/helpers/private-galera.ts).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeWithPrivateGalera, startPrivateGalera, type PrivateGalera } from '../helpers/private-galera.js';

describeWithPrivateGalera('private Galera cluster (the harness itself)', () => {
  let cluster: PrivateGalera;

  beforeAll(async () => {
    cluster = await startPrivateGalera();
    console.info(`[galera] 3 nodes Synced in ${cluster.startupMs} ms`);
  }, 120_000);

  afterAll(async () => {
    await cluster?.destroy();
  });

  it('three Synced nodes in one Primary component; a row written on node 1 is read on node 3; auto_increment_increment is the cluster size', async () => {
    for (const node of cluster.nodes) {
      expect(await cluster.status(node)).toEqual({ state: 'Synced', clusterStatus: 'Primary', clusterSize: 3, ready: true });
    }
    await cluster.createDatabase('smoke');
    await cluster.query(0, 'create table t (id bigint auto_increment primary key, v int not null)', [], 'smoke');
    await cluster.query(0, 'insert into t (v) values (1)', [], 'smoke');
    await cluster.query(1, 'insert into t (v) values (2)', [], 'smoke');
    const rows = await cluster.query<{ v: number }>(2, 'select v from t order by v', [], 'smoke');
    expect(rows.map((row) => row.v)).toEqual([1, 2]);
    const [increment] = await cluster.query<{ value: number }>(2, 'select @@auto_increment_increment as value');
    expect(Number(increment?.value)).toBe(3);
  });

  it('a SIGKILLed node leaves a Primary cluster of 2; restarted, it rejoins with the rows written meanwhile', async () => {
    await cluster.kill(1);
    expect(cluster.nodes[1]!.running()).toBe(false);
    await cluster.waitUntilSynced(20_000);
    expect((await cluster.status(0)).clusterSize).toBe(2);
    await cluster.query(2, 'insert into t (v) values (3)', [], 'smoke');
    const began = Date.now();
    await cluster.restart(1);
    console.info(`[galera] node 2 rejoined in ${Date.now() - began} ms`);
    const rows = await cluster.query<{ v: number }>(1, 'select v from t order by v', [], 'smoke');
    expect(rows.map((row) => row.v)).toEqual([1, 2, 3]);
    expect((await cluster.status(1)).clusterSize).toBe(3);
  }, 90_000);
});
