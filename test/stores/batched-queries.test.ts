// Requests that arrive together share queries (the speed path batched-queries,
// src/fast/batched-queries/): GET /book/:id on PostgreSQL and MySQL is one query, the same list
// page one query on every store, POST /book on PostgreSQL and MariaDB ≥ 10.5 one INSERT …
// RETURNING. Each request must still get exactly its own book, a missing one its 404, a write
// acknowledged before a read must be seen by it, and one refused book must not fail the others.
// The first suite holds with the path off as well.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredBook } from '../../src/books/book.js';
import { KeyTakenOverError, type BookStore } from '../../src/store/book-store.js';
import { BatchedBookStore, batchStatementsFor } from '../../src/fast/batched-queries/index.js';
import { hasInsertReturning } from '../../src/fast/batched-queries/mysql.js';
import type { BatchStatements } from '../../src/fast/batched-queries/statements.js';
import { groupCommit } from '../../src/fast/group-commit.js';
import type { BookStoreDriver } from '../../src/store/driver.js';
import { bookStoreOn, openStore } from '../../src/store/open-store.js';
import { openDriver } from '../../src/store/store-url.js';
import { NO_TRACING } from '../../src/tracing/tracing.js';
import { fastPaths } from '../helpers/node-http.js';
import { useService } from '../helpers/service/start-service.js';
import { createTestStore, testStoreSettings, type TestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

const BOOKS = 40;

forEachStore((kind) => {
  describe('GET /book/:id, many at once', () => {
    const service = useService(kind);

    it(`${BOOKS} books, missing ids and repeated ids read at once: each answer is its own`, async () => {
      const token = await service.client.token();
      const created = await Promise.all(
        Array.from({ length: BOOKS }, (_, i) =>
          service.client.createBook(token, { title: `Batch ${i}`, author: `Reader ${i % 5}`, year: 1900 + i }),
        ),
      );
      const deleted = created.splice(0, 5);
      for (const book of deleted) expect((await service.client.request('DELETE', `/book/${book.id}`, { token })).status).toBe(200);
      const missing = [...deleted.map((book) => book.id), Math.max(...created.map((book) => book.id)) + 1000];
      // Each existing id three times, each missing one twice, interleaved.
      const ids = [...created, ...created, ...created].map((book) => book.id).concat(missing, missing);
      ids.sort((a, b) => (a * 7919) % 101 - (b * 7919) % 101);

      const responses = await Promise.all(ids.map((id) => service.client.request('GET', `/book/${id}`, { token })));

      const byId = new Map(created.map((book) => [book.id, book]));
      responses.forEach((response, i) => {
        const book = byId.get(ids[i]!);
        if (book) expect(response.body, `GET /book/${ids[i]}`).toEqual({ status: 200, message: 'Book retrieved successfully', data: book });
        else expect(response.body, `GET /book/${ids[i]}`).toEqual({ status: 404, message: 'Book not found', data: null });
      });
    });
  });
}, ['sqlite', 'postgres', 'mysql']);

// Tests of the speed path itself, here and below: nothing to test when FAST_PATHS leaves it off.
describe.skipIf(!fastPaths.has('batched-queries'))('which MySQL servers insert several books in one statement (INSERT … RETURNING)', () => {
  it('MariaDB 10.5 and later; older MariaDB and MySQL do not', () => {
    for (const version of ['10.5.0-MariaDB', '10.11.6-MariaDB-0+deb12u1', '11.4.2-MariaDB-log', '10.6.18-MariaDB-ubu2004'])
      expect(hasInsertReturning(version), version).toBe(true);
    for (const version of ['10.4.34-MariaDB', '10.3.39-MariaDB-0+deb10u1', '5.5.5-10.1.48-MariaDB', '8.0.36', '8.4.0-commercial', '5.7.44-log', ''])
      expect(hasInsertReturning(version), version).toBe(false);
  });
});

// The batching itself, on the repository over a real database: how many queries the reads took.
forEachStore((kind) => {
  const acrossNetwork = kind !== 'sqlite';
  // Tests the speed path batched-queries: skipped when FAST_PATHS turns it off (each read is then its own query).
  describe.skipIf(!fastPaths.has('batched-queries'))('the repository batches the reads of one turn', () => {
    let testStore: TestStore;
    let driver: BookStoreDriver;
    let repository: BookStore;
    /** PostgreSQL, and MariaDB ≥ 10.5 (INSERT … RETURNING): a turn's creates are one INSERT. */
    let insertsTogether = false;
    const batches: bigint[][] = [];
    const pages: string[] = [];
    const inserts: number[] = [];
    /** Set by a test: the next shared INSERT runs, then fails as if its answer were lost. */
    let loseNextInsertAnswer = false;
    const claimBatches: number[] = [];
    const transactions = { count: 0 };

    beforeAll(async () => {
      testStore = await createTestStore(kind);
      const logger = pino({ level: 'silent' });
      const settings = testStoreSettings(testStore, { timeoutMs: 5000, poolMax: 4 });
      // Migrated by the real startup path, then opened again with its reads counted; SQLite's
      // writes share commits as the service's do with the group-commit path on.
      await (await openStore(settings, logger)).close();
      const commits = fastPaths.has('group-commit') ? groupCommit() : undefined;
      driver = await openDriver(settings.target, {
        queryTimeoutMs: 5000,
        poolMax: 4,
        logger,
        description: settings.description,
        sqliteWriter: commits?.sqliteWriter,
      });
      // Connected, as openStore is before the layers look at the driver (MySQL learns the server's version on its first connection).
      const version =
        kind === 'sqlite' ? 'SQLite' : (await sql<{ version: string }>`select version() as version`.execute(driver.db)).rows[0]!.version;
      insertsTogether = kind === 'postgres' || (kind === 'mysql' && hasInsertReturning(version));
      const statements = await batchStatementsFor(driver);
      // SQLite reads one book by a synchronous call: nothing to batch.
      expect(statements !== undefined, `${kind} reads several ids in one query`).toBe(acrossNetwork);
      let counted: BatchStatements | undefined;
      if (statements) {
        const { selectByIds, insertBooks, claimKeys } = statements;
        // Only PostgreSQL and MariaDB ≥ 10.5 say which id each row of a multi-row INSERT got (RETURNING).
        expect(insertBooks !== undefined, `${kind} (${version}) inserts several books in one statement`).toBe(insertsTogether);
        // The same stores: INSERT … ON CONFLICT DO NOTHING / INSERT IGNORE … RETURNING say which keys they wrote.
        expect(claimKeys !== undefined, `${kind} claims several Idempotency-Keys in one statement`).toBe(insertsTogether);
        counted = {
          ...statements,
          selectByIds: (ids) => {
            batches.push([...ids]);
            return selectByIds(ids);
          },
          insertBooks:
            insertBooks &&
            (async (run, books) => {
              inserts.push(books.length);
              const result = await insertBooks(run, books);
              if (loseNextInsertAnswer) {
                loseNextInsertAnswer = false;
                throw new Error('the answer was lost after the INSERT committed');
              }
              return result;
            }),
          claimKeys:
            claimKeys &&
            ((requests) => {
              claimBatches.push(requests.length);
              return claimKeys(requests);
            }),
        };
      }
      const transaction = driver.transaction.bind(driver);
      driver.transaction = (work) => {
        transactions.count += 1;
        return transaction(work);
      };
      const selectPage = driver.selectPage.bind(driver);
      driver.selectPage = (afterId, limit) => {
        pages.push(`${afterId}:${limit}`);
        return selectPage(afterId, limit);
      };
      repository = await bookStoreOn(driver, undefined, [commits, { around: async (store) => new BatchedBookStore(store, driver, counted, NO_TRACING) }]);
    });

    afterAll(async () => {
      await repository?.close();
      await testStore?.drop();
    });

    // Skipped on SQLite: its reads are synchronous calls and are not batched (no selectByIds).
    it.runIf(acrossNetwork)('reads asked for together are one query; each gets its own book or nothing', async () => {
      const books: StoredBook[] = [];
      for (let i = 0; i < 12; i += 1) books.push(await repository.create({ title: `T${i}`, author: `A${i}`, year: i }));
      const missing = books.at(-1)!.id + 100n;
      batches.length = 0;

      const asked = [...books.map((book) => book.id), missing, books[3]!.id];
      const answers = await Promise.all(asked.map((id) => repository.get(id)));

      expect(batches).toHaveLength(1);
      expect(batches[0]).toEqual(asked);
      expect(answers).toEqual([...books, undefined, books[3]]);
    });

    // Skipped on SQLite, as above: no batched reads to observe.
    it.runIf(acrossNetwork)('a write acknowledged before the reads is seen by them; reads in separate turns are separate queries', async () => {
      const book = await repository.create({ title: 'Before', author: 'Writer', year: 1 });
      batches.length = 0;
      await repository.update(book.id, { title: 'After' });
      expect(await repository.get(book.id)).toEqual({ ...book, title: 'After', version: book.version + 1 });
      await repository.delete(book.id);
      expect(await repository.get(book.id)).toBeUndefined();
      expect(batches).toEqual([[book.id], [book.id]]);
    });

    it('the same list page asked for together is one query; another page is its own; a write before is seen', async () => {
      for (let i = 0; i < 3; i += 1) await repository.create({ title: `Listed ${i}`, author: 'A', year: i });
      pages.length = 0;
      const [first, ...others] = await Promise.all([
        ...Array.from({ length: 8 }, () => repository.listPageJson(0n, 1000)),
        repository.listPageJson(0n, 2),
      ]);
      expect(pages.sort()).toEqual(['0:1000', '0:2']);
      for (const page of others.slice(0, 7)) expect(page).toEqual(first);
      expect(others[7]!.count).toBe(2);

      const added = await repository.create({ title: 'Listed last', author: 'B', year: 3 });
      const after = await repository.listPageJson(0n, 1000);
      expect(after.count).toBe(first!.count + 1);
      expect(after.lastId).toBe(added.id);
      expect(pages).toHaveLength(3);
    });

    // PostgreSQL and MariaDB ≥ 10.5 only: the stores with insertBooks (MySQL's multi-row insert does
    // not say which id each row got; SQLite writes through group commit instead).
    it('creates asked for together are one INSERT; each gets a row with its own fields and its own id', async ({ skip }) => {
      if (!insertsTogether) skip(); // SQLite, and MySQL without INSERT … RETURNING: no shared INSERT to observe (see above)
      const fields = Array.from({ length: 10 }, (_, i) => ({ title: `Together ${i % 4}`, author: `W${i % 4}`, year: 2000 + (i % 4) }));
      inserts.length = 0;
      const created = await Promise.all(fields.map((book) => repository.create(book)));
      expect(inserts).toEqual([10]);
      created.forEach((book, i) => expect(book).toEqual({ id: expect.any(BigInt), ...fields[i], version: 1 }));
      expect(new Set(created.map((book) => book.id)).size).toBe(10);
      for (const book of created) expect(await repository.get(book.id)).toEqual(book);
    });

    // PostgreSQL and MariaDB ≥ 10.5 only, as above (shared INSERTs).
    it('a book the database refuses fails only its own request; the others are written', async ({ skip }) => {
      if (!insertsTogether) skip(); // SQLite, and MySQL without INSERT … RETURNING: no shared INSERT to observe (see above)
      // The API refuses these before the store; here they are sent directly. NUL cannot be stored
      // in PostgreSQL text; MariaDB in strict mode refuses a title longer than its column.
      const refused = kind === 'postgres' ? 'Refused \u0000' : `Refused ${'x'.repeat(600)}`;
      const fields = [
        { title: 'Kept 1', author: 'A', year: 1 },
        { title: refused, author: 'A', year: 2 },
        { title: 'Kept 2', author: 'A', year: 3 },
      ];
      inserts.length = 0;
      const results = await Promise.allSettled(fields.map((book) => repository.create(book)));
      expect(inserts).toEqual([3]);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      for (const result of results) {
        if (result.status === 'fulfilled') expect(await repository.get(result.value.id)).toEqual(result.value);
      }
      const page = await repository.listPageJson(0n, 1000);
      expect(page.json).not.toContain('Refused');
    });

    // Skipped on SQLite and plain MySQL: only PostgreSQL and MariaDB ≥ 10.5 have a multi-row INSERT …
    // RETURNING (SQLite's keyed creates share the group commit instead: the next test but one;
    // MySQL claims and writes each alone).
    it('creates with Idempotency-Keys asked for together: the keys claimed in one statement, the books and their answers in one transaction, each answer stored with its own key', async ({ skip }) => {
      if (!insertsTogether) skip(); // SQLite, and MySQL without INSERT … RETURNING: no shared INSERT to observe (see above)
      const fields = Array.from({ length: 8 }, (_, i) => ({ title: `Keyed ${i % 3}`, author: 'K', year: i % 3 }));
      const requests = fields.map((_, i) => ({ key: `batched-${randomUUID()}-${i}`, fingerprint: 'f'.repeat(64), owner: randomUUID() }));
      // One key exists already (an earlier request's): it is not claimed again, and is looked at alone.
      const earlier = { key: `batched-${randomUUID()}-earlier`, fingerprint: 'e'.repeat(64), owner: randomUUID() };
      expect(await repository.claimKey(earlier)).toEqual({ kind: 'claimed' });
      claimBatches.length = 0;
      const claims = await Promise.all([...requests, { ...earlier, owner: randomUUID() }].map((request) => repository.claimKey(request)));
      expect(claims).toEqual([...requests.map(() => ({ kind: 'claimed' })), { kind: 'in-progress' }]);
      expect(claimBatches).toEqual([9]);
      transactions.count = 0;
      const answerOf = (book: { id: bigint }) => ({ status: 201, etag: `"${book.id}-1"`, body: `book ${book.id}` });
      const created = await Promise.all(fields.map((book, i) => repository.create(book, { request: requests[i]!, answer: answerOf })));
      expect(transactions.count).toBe(1);
      created.forEach((book, i) => expect(book).toEqual({ id: expect.any(BigInt), ...fields[i], version: 1 }));
      // A repeat of each key (a new attempt) is told its own book's answer.
      const repeats = await Promise.all(requests.map((request) => repository.claimKey({ ...request, owner: randomUUID() })));
      expect(repeats).toEqual(created.map((book) => ({ kind: 'replay', answer: answerOf(book) })));
    });

    // Skipped on SQLite and plain MySQL, as above.
    it('creates with Idempotency-Keys asked for together, one whose key was taken over: the shared transaction rolled back, each written alone, only that one fails', async ({ skip }) => {
      if (!insertsTogether) skip(); // SQLite, and MySQL without INSERT … RETURNING: no shared INSERT to observe (see above)
      const fields = Array.from({ length: 4 }, (_, i) => ({ title: `Taken over ${i}`, author: 'T', year: i }));
      const requests = fields.map((_, i) => ({ key: `taken-${randomUUID()}-${i}`, fingerprint: 'f'.repeat(64), owner: randomUUID() }));
      for (const request of requests) expect(await repository.claimKey(request)).toEqual({ kind: 'claimed' });
      const lost = requests[1]!;
      await driver.runWrite(driver.db.updateTable('idempotency_keys').set({ owner: randomUUID() }).where('idempotency_key', '=', lost.key).compile());
      inserts.length = 0;
      transactions.count = 0;
      const answerOf = (book: { id: bigint }) => ({ status: 201, etag: `"${book.id}-1"`, body: `book ${book.id}` });
      const results = await Promise.allSettled(fields.map((book, i) => repository.create(book, { request: requests[i]!, answer: answerOf })));
      // The shared one, then one each.
      expect(transactions.count).toBe(1 + fields.length);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      expect((results[1] as PromiseRejectedResult).reason).toBeInstanceOf(KeyTakenOverError);
      const page = await repository.listPageJson(0n, 1000);
      for (const [i, book] of fields.entries()) expect(page.json.split(`"title":"${book.title}"`)).toHaveLength(i === 1 ? 1 : 2);
      for (const i of [0, 2, 3]) {
        const book = (results[i] as PromiseFulfilledResult<{ id: bigint }>).value;
        expect(await repository.claimKey({ ...requests[i]!, owner: randomUUID() })).toEqual({ kind: 'replay', answer: answerOf(book) });
      }
    });

    // Skipped on PostgreSQL and MySQL: only SQLite has a group commit; their keyed creates are
    // transactions (PostgreSQL's batched: the test above). Skipped too when FAST_PATHS leaves
    // the group-commit path off: SQLite's keyed creates are then transactions of their own.
    it.runIf(kind === 'sqlite' && fastPaths.has('group-commit'))('creates with Idempotency-Keys asked for together share the group commit; one whose key was taken over fails alone, nothing of it written', async () => {
      const fields = Array.from({ length: 6 }, (_, i) => ({ title: `Grouped ${i}`, author: 'G', year: i }));
      const requests = fields.map((_, i) => ({ key: `grouped-${randomUUID()}-${i}`, fingerprint: 'f'.repeat(64), owner: randomUUID() }));
      for (const request of requests) expect(await repository.claimKey(request)).toEqual({ kind: 'claimed' });
      // Another attempt took the last key over (as after ABANDONED_CLAIM_MS).
      const lost = requests.at(-1)!;
      await driver.runWrite(driver.db.updateTable('idempotency_keys').set({ owner: randomUUID() }).where('idempotency_key', '=', lost.key).compile());
      transactions.count = 0;
      const answerOf = (book: { id: bigint }) => ({ status: 201, etag: `"${book.id}-1"`, body: `book ${book.id}` });
      const results = await Promise.allSettled(fields.map((book, i) => repository.create(book, { request: requests[i]!, answer: answerOf })));
      expect(transactions.count).toBe(0);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
      expect((results.at(-1) as PromiseRejectedResult).reason).toBeInstanceOf(KeyTakenOverError);
      const page = await repository.listPageJson(0n, 1000);
      expect(page.json).not.toContain('Grouped 5');
      for (const [i, result] of results.slice(0, 5).entries()) {
        const book = (result as PromiseFulfilledResult<{ id: bigint }>).value;
        expect(await repository.claimKey({ ...requests[i]!, owner: randomUUID() })).toEqual({ kind: 'replay', answer: answerOf(book) });
      }
    });

    // PostgreSQL and MariaDB ≥ 10.5 only, as above (shared INSERTs).
    it('a shared INSERT whose outcome is unknown is not written again: every request fails, nothing is doubled', async ({ skip }) => {
      if (!insertsTogether) skip(); // SQLite, and MySQL without INSERT … RETURNING: no shared INSERT to observe (see above)
      const fields = [1, 2, 3].map((i) => ({ title: `Unknown outcome ${i}`, author: 'A', year: i }));
      loseNextInsertAnswer = true;
      const results = await Promise.allSettled(fields.map((book) => repository.create(book)));
      expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
      const page = await repository.listPageJson(0n, 1000);
      for (const book of fields) expect(page.json.split(`"title":"${book.title}"`)).toHaveLength(2);
    });
  });
});
