// Group commit for SQLite (the speed path group-commit, src/fast/group-commit.ts): concurrent
// writes share a transaction, each is acknowledged after its commit, and one failing write is
// refused alone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteConnection, type SqliteConnection } from '../../src/store/sqlite/connection.js';
import { GroupCommit, type TransactionalDatabase } from '../../src/fast/group-commit.js';
import { fastPaths } from '../helpers/node-http.js';
import { openSqlite } from '../helpers/stores/sqlite.js';

let dir: string;
let sqlite: SqliteConnection;

/** The service's own SQLite setup (WAL, synchronous=FULL, statement cache, synchronous executor). */
function open(): SqliteConnection {
  return openSqliteConnection(join(dir, 'test.db'), { description: 'test' });
}

const run = (text: string, ...parameters: unknown[]) => sqlite.execute(CompiledQuery.raw(text, parameters));
const insert = (name: string | null) => () => run('insert into items (name) values (?) returning id', name).rows[0] as { id: bigint };
const count = () => Number((run('select count(*) as n from items').rows[0] as { n: bigint }).n);

/** The database, counting the transactions that are begun (savepoints inside one are not counted). */
function countingTransactions(database: TransactionalDatabase) {
  const counter = { begun: 0 };
  const counting: TransactionalDatabase = {
    get inTransaction() {
      return database.inTransaction;
    },
    transaction(fn) {
      const transaction = database.transaction(fn);
      return Object.assign((...args: Parameters<typeof transaction>) => {
        if (!database.inTransaction) counter.begun += 1;
        return transaction(...args);
      }, transaction) as typeof transaction;
    },
  };
  return { counting, counter };
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'group-commit-'));
  sqlite = open();
  run('create table items (id integer primary key autoincrement, name text not null)');
});

afterEach(() => {
  if (sqlite.database.open) sqlite.database.close();
  rmSync(dir, { recursive: true, force: true });
});

// A test of the speed path itself: nothing to test when FAST_PATHS leaves it off.
describe.skipIf(!fastPaths.has('group-commit'))('GroupCommit', () => {
  it('writes issued together share one transaction, and all are stored', async () => {
    const { counting, counter } = countingTransactions(sqlite.database);
    const groupCommit = new GroupCommit(counting);
    const rows = await Promise.all(Array.from({ length: 50 }, (_, i) => groupCommit.run(insert(`n${i}`))));
    expect(new Set(rows.map((row) => row.id)).size).toBe(50);
    expect(counter.begun).toBe(1);
    expect(count()).toBe(50);
  });

  it('a write is acknowledged only once its transaction has committed', async () => {
    const groupCommit = new GroupCommit(sqlite.database);
    const written = groupCommit.run(insert('a'));
    expect(count()).toBe(0); // queued for the next batch, not yet run
    await written;
    // A separate connection sees it: it is committed, not merely executed.
    const other = openSqlite(join(dir, 'test.db'), { readonly: true });
    expect(other.prepare('select count(*) as n from items').get()).toEqual({ n: 1 });
    other.close();
  });

  it('one failing write is refused alone; the rest of its batch commits', async () => {
    const groupCommit = new GroupCommit(sqlite.database);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => groupCommit.run(insert(i === 7 ? null : `n${i}`))),
    );
    expect(results.filter((result) => result.status === 'rejected')).toHaveLength(1);
    expect(results[7]!.status).toBe('rejected');
    expect(count()).toBe(19);
  });

  it('when SQLite ends the whole transaction, nothing of it stays; the failing write is refused and the others run again', async () => {
    const { counting, counter } = countingTransactions(sqlite.database);
    const groupCommit = new GroupCommit(counting);
    // A write that ends the transaction behind the batch's back, as SQLite does itself after
    // some errors (disk full, I/O): the writes before it are rolled back with it.
    const endsTransaction = () => run('rollback');
    const results = await Promise.allSettled([
      groupCommit.run(insert('before')),
      groupCommit.run(endsTransaction),
      groupCommit.run(insert('after')),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(counter.begun).toBe(2);
    expect(run('select name from items order by id').rows).toEqual([{ name: 'before' }, { name: 'after' }]);
  });

  it('when the commit itself fails, no write of the batch is acknowledged, and none is stored', async () => {
    // A foreign key checked only at COMMIT: BEGIN and every write of the batch succeed, then
    // COMMIT refuses the orphan, and SQLite keeps nothing of the transaction.
    run('pragma foreign_keys = on');
    run('create table parents (id integer primary key)');
    run('create table children (parent integer not null references parents (id) deferrable initially deferred)');
    const orphan = () => run('insert into children (parent) values (?)', 42);
    let ran = 0;
    const counted = (write: () => unknown) => () => {
      ran += 1;
      return write();
    };
    const groupCommit = new GroupCommit(sqlite.database);
    const results = await Promise.allSettled([insert('a'), orphan, insert('b')].map((write) => groupCommit.run(counted(write))));
    expect(ran).toBe(3); // the batch ran whole: it failed at COMMIT, not before
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: 'SQLITE_CONSTRAINT_FOREIGNKEY' });
    }
    expect(sqlite.database.inTransaction).toBe(false);
    expect(count()).toBe(0);
    expect(run('select count(*) as n from children').rows).toEqual([{ n: 0n }]);
    // The connection is not left inside the failed transaction: the next batch commits.
    await groupCommit.run(insert('c'));
    expect(count()).toBe(1);
  });

  it('when the transaction cannot even begin, no write of the batch is acknowledged', async () => {
    const groupCommit = new GroupCommit(sqlite.database);
    sqlite.database.close(); // every statement now fails, BEGIN first
    const results = await Promise.allSettled([1, 2, 3].map(() => groupCommit.run(insert('x'))));
    expect(results.every((result) => result.status === 'rejected')).toBe(true);
  });
});
