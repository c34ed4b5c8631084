// The store server's durability settings, read at startup (docs/operations.md "Durability"):
// each one that weakens "an acknowledged write survives a crash" is one warning naming the
// setting and the value to set; the service still starts. The shared servers are never
// reconfigured: PostgreSQL's synchronous_commit is set on the test's own database (ALTER
// DATABASE … SET), MariaDB's innodb_flush_log_at_trx_commit is global, so its warning is proven
// on the private Galera cluster (galera-cluster.test.ts), which runs with 0.
import { afterAll, expect, it } from 'vitest';
import { describeIf } from '../helpers/requirements.js';
import { killAllChildServices, startService } from '../helpers/service/start-service.js';
import { createTestStore, execInTestStore, withPostgresAdmin, type TestStore } from '../helpers/stores/test-store.js';

const stores: TestStore[] = [];
afterAll(async () => {
  await killAllChildServices();
  for (const store of stores) await store.drop();
});

/** What a service started on `store` logged once it answered. */
async function startupLog(store: TestStore): Promise<string> {
  const service = await startService({ childProcess: true, dbUrl: store.url });
  expect(await service.stop()).toBe(0);
  return service.process.stdout() + service.process.stderr();
}

describeIf('postgres')('PostgreSQL', () => {
  it('synchronous_commit = off: one warning naming it; the server as configured here: none', async () => {
    const store = await createTestStore('postgres');
    stores.push(store);
    expect(await startupLog(store)).not.toMatch(/synchronous_commit|fsync|full_page_writes/);

    const database = new URL(store.url).pathname.slice(1);
    await withPostgresAdmin((client) => client.query(`alter database ${database} set synchronous_commit = off`));
    const warned = (await startupLog(store)).split('\n').filter((line) => line.includes('synchronous_commit'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain('"level":40');
    expect(warned[0]).toContain(
      'PostgreSQL at 127.0.0.1:5432 has synchronous_commit = off: a crash of the server can lose the last acknowledged writes; set synchronous_commit = on (docs/operations.md \\"Durability\\")',
    );
  });
});

describeIf('mysql')('MySQL/MariaDB', () => {
  it('innodb_flush_log_at_trx_commit = 1 (the server as configured here): no warning', async () => {
    const store = await createTestStore('mysql');
    stores.push(store);
    await execInTestStore(store, 'select 1');
    expect(await startupLog(store)).not.toMatch(/innodb_flush_log_at_trx_commit/);
  });
});
