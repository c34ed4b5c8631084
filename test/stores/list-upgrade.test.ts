// Upgrading a store that already holds books (docs/operations.md "Upgrading an existing
// collection"): a store migrated only up to 003, filled with books, then opened by the service,
// which runs 004-list-indexes. The books that were there before are found by the search, in
// every sort, as the ones written afterwards are; and the migration undone and done again leaves
// the same answers (an attempt that stopped halfway is run again).
import { Migrator } from 'kysely';
import { pino } from 'pino';
import { afterAll, expect, it } from 'vitest';
import { openDriver } from '../../src/store/store-url.js';
import { migrationsFor } from '../../src/store/migrations/index.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { createTestStore, execInTestStore, testStoreSettings, type TestStore } from '../helpers/stores/test-store.js';
import type { Book } from '../helpers/client/books.js';
import { startService } from '../helpers/service/start-service.js';
import { ApiClient } from '../helpers/client/api-client.js';

const BEFORE = [
  ['The Hobbit', 'J.R.R. Tolkien', 1937],
  ["At Swim-Two-Birds", "Flann O'Brien", 1939],
  ['Émile', 'Jean-Jacques Rousseau', 1762],
] as const;

/** Migrates a fresh store up to `target` only, as an older release left it. */
async function migrateTo(testStore: TestStore, target: string | undefined, direction: 'to' | 'down' = 'to') {
  const settings = testStoreSettings(testStore, { timeoutMs: 30_000, poolMax: 2 });
  const driver = await openDriver(settings.target, { queryTimeoutMs: 30_000, poolMax: 2, logger: pino({ level: 'silent' }), description: settings.description });
  try {
    const migrator = new Migrator({
      db: driver.db,
      provider: migrationsFor(driver.booksTable),
      migrationTableName: 'book_service_migrations',
      migrationLockTableName: 'book_service_migrations_lock',
    });
    const { error } = direction === 'down' ? await migrator.migrateDown() : await migrator.migrateTo(target!);
    if (error) throw error;
  } finally {
    await driver.close();
  }
}

forEachStore((kind) => {
  let testStore: TestStore;
  afterAll(async () => {
    await testStore?.drop();
  });

  it('books stored before 004 are searched and sorted once the service has migrated; 004 undone and done again gives the same answers', async () => {
    testStore = await createTestStore(kind);
    await migrateTo(testStore, '003-idempotency-keys');
    const values = BEFORE.map(([title, author, year]) => `('${title.replaceAll("'", "''")}', '${author.replaceAll("'", "''")}', ${year})`);
    await execInTestStore(testStore, `insert into books (title, author, year) values ${values.join(', ')}`);

    const answers = async () => {
      const service = await startService({ kind, dbUrlFrom: () => testStore.url });
      const client = new ApiClient(service.baseUrl);
      const token = await client.token();
      try {
        const created = await client.createBook(token, { title: 'The Hobbit, annotated', author: 'Douglas Anderson', year: 1988 });
        const search = async (q: string) => ((await client.request('GET', `/books?q=${encodeURIComponent(q)}`, { token })).body.data as Book[]).map((book) => book.title);
        const byYear = ((await client.request('GET', '/books?sort=-year&limit=10', { token })).body.data as Book[]).map((book) => book.year);
        const found = { hobbit: await search('hob'), tolkien: await search('tolk hob'), brien: await search('brien'), emile: await search('émi'), byYear };
        await client.request('DELETE', `/book/${created.id}`, { token });
        return found;
      } finally {
        await service.stop();
      }
    };
    const expected = {
      hobbit: ['The Hobbit', 'The Hobbit, annotated'],
      tolkien: ['The Hobbit'],
      brien: ['At Swim-Two-Birds'],
      emile: ['Émile'],
      byYear: [1988, 1939, 1937, 1762],
    };
    expect(await answers()).toEqual(expected);
    await migrateTo(testStore, undefined, 'down');
    expect(await answers()).toEqual(expected);
  });
});
