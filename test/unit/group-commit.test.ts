// Group commit for SQLite (src/store/group-commit.ts): concurrent writes share a transaction,
// each is acknowledged after its commit, and one failing write is refused alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, sql, type Transaction } from 'kysely';
import { pino } from 'pino';
import { openSqliteDialect } from '../../src/store/dialects/sqlite.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/group-commit.js';
import { openSqlite } from '../helpers/sqlite.js';

interface DB {
  items: { id: number | null; name: string | null };
}

let dir: string;
let db: Kysely<DB>;

/** The service's own SQLite setup (WAL, synchronous=FULL, statement cache). */
function open(): Kysely<DB> {
  const options = { queryTimeoutMs: 5000, poolMax: undefined, logger: pino({ level: 'silent' }), description: 'test' };
  return new Kysely<DB>({ dialect: openSqliteDialect(join(dir, 'test.db'), options).kyselyDialect });
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
  db = open();
  await sql`create table items (id integer primary key autoincrement, name text not null)`.execute(db);
});

afterEach(async () => {
  await db.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const count = async () => Number((await sql<{ n: number }>`select count(*) as n from items`.execute(db)).rows[0]!.n);

describe('GroupCommit', () => {
  it('writes issued together share one transaction, and all are stored', async () => {
    const groupCommit = new GroupCommit(db);
    const transactions = new Set<Transaction<DB>>();
    const ids = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        groupCommit.run(async (trx) => {
          transactions.add(trx);
          const row = await trx.insertInto('items').values({ name: `n${i}` }).returning('id').executeTakeFirstOrThrow();
          return row.id;
        }),
      ),
    );
    expect(new Set(ids).size).toBe(50);
    expect(transactions.size).toBeLessThan(5);
    expect(await count()).toBe(50);
  });

  it('a write is acknowledged only once its transaction has committed', async () => {
    const groupCommit = new GroupCommit(db);
    await groupCommit.run((trx) => trx.insertInto('items').values({ name: 'a' }).execute());
    // A separate connection sees it: it is committed, not merely executed.
    const other = openSqlite(join(dir, 'test.db'), { readonly: true });
    expect(other.prepare('select count(*) as n from items').get()).toEqual({ n: 1 });
    other.close();
  });

  it('one failing write is refused alone; the rest of its batch commits', async () => {
    const groupCommit = new GroupCommit(db);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        groupCommit.run((trx) => trx.insertInto('items').values({ name: i === 7 ? null : `n${i}` }).execute()),
      ),
    );
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(1);
    expect(results[7]!.status).toBe('rejected');
    expect(await count()).toBe(19);
  });

  it('when the commit itself fails, no write of the batch is acknowledged', async () => {
    const groupCommit = new GroupCommit(db);
    await db.destroy(); // every statement now fails, the transaction cannot even begin
    const results = await Promise.allSettled([1, 2, 3].map(() => groupCommit.run((trx) => trx.insertInto('items').values({ name: 'x' }).execute())));
    expect(results.every((result) => result.status === 'rejected')).toBe(true);
    db = open();
  });
});
