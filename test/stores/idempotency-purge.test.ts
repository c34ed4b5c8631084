// Expired Idempotency-Keys are deleted in the background (src/store/key-purge.ts), on every
// store: keys claimed and answered through the store, and a backlog larger than one purge
// statement (PURGE_BATCH) written straight into the table, are all gone soon after
// IDEMPOTENCY_TTL.
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { BookStore } from '../../src/store/book-store.js';
import type { BookStoreDriver } from '../../src/store/driver.js';
import { PURGE_BATCH } from '../../src/store/idempotency-keys.js';
import { openStore } from '../../src/store/open-store.js';
import { openDriver } from '../../src/store/store-url.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { createTestStore, testStoreSettings, type TestStore } from '../helpers/stores/test-store.js';

const TTL_MS = 1000;

forEachStore((kind) => {
  let testStore: TestStore;
  let store: BookStore;
  let driver: BookStoreDriver;

  beforeAll(async () => {
    testStore = await createTestStore(kind);
    const logger = pino({ level: 'silent' });
    const settings = { ...testStoreSettings(testStore, { timeoutMs: 5000, poolMax: 2 }), idempotencyTtlMs: TTL_MS };
    store = await openStore(settings, logger);
    // A connection of the test's own, to look into the table.
    driver = await openDriver(settings.target, { queryTimeoutMs: 5000, poolMax: 2, logger, description: settings.description });
  });

  afterAll(async () => {
    await driver?.close();
    await store?.close();
    await testStore?.drop();
  });

  const keysLeft = async (prefix: string) =>
    Number(
      (
        await driver.db
          .selectFrom('idempotency_keys')
          .select((eb) => eb.fn.countAll().as('left'))
          .where('idempotency_key', 'like', `${prefix}%`)
          .executeTakeFirstOrThrow()
      ).left,
    );

  it(`keys older than IDEMPOTENCY_TTL are deleted in the background, ${PURGE_BATCH * 2 + 500} of them in batches, answered or not`, async () => {
    const run = randomUUID().slice(0, 8);
    // Three keys through the store: two claimed only, one with its book and answer.
    const requests = [0, 1, 2].map((i) => ({ key: `${run}-claimed-${i}`, fingerprint: 'f'.repeat(64), owner: randomUUID() }));
    for (const request of requests) expect(await store.claimKey(request)).toEqual({ kind: 'claimed' });
    await store.create({ title: 'Purged', author: 'P', year: 1 }, { request: requests[2]!, answer: (book) => ({ status: 201, etag: undefined, body: `${book.id}` }) });
    // A backlog claimed long ago (created_ms 0: the epoch), more than two purge statements' worth.
    const backlog = Array.from({ length: PURGE_BATCH * 2 + 500 }, (_, i) => ({
      idempotency_key: `${run}-old-${i}`,
      fingerprint: 'f'.repeat(64),
      owner: 'gone',
      created_ms: 0,
    }));
    for (let at = 0; at < backlog.length; at += 500) await driver.db.insertInto('idempotency_keys').values(backlog.slice(at, at + 500)).execute();
    expect(await keysLeft(run)).toBe(backlog.length + 3);

    await expect.poll(() => keysLeft(`${run}-old-`), { timeout: 10_000, interval: 200 }).toBe(0);
    await expect.poll(() => keysLeft(`${run}-claimed-`), { timeout: 10_000, interval: 200 }).toBe(0);
  }, 30_000);
});
