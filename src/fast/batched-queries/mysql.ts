// MySQL's and MariaDB's batch statements for the speed path batched-queries (statements.ts;
// index.ts says why, with MariaDB's measurements, and plugs them in through
// FastPaths.shareQueries): ids read with `in (?, …)`; on MariaDB ≥ 10.5 several books
// inserted, and several keys claimed, in one INSERT … RETURNING. MySQL's multi-row INSERT does
// not say which id each row got (consecutive only in some innodb_autoinc_lock_mode settings,
// stepped on Galera), nor its INSERT IGNORE which rows it wrote: there each book and key is its
// own statement. They stand in for the MySQL module's one-book statements
// (src/store/mysql/index.ts), which is where they were before; it keeps what one request sends.
import { sql } from 'kysely';
import type { BookFields } from '../../books/book.js';
import type { KeyedRequest } from '../../store/book-store.js';
import { bind, toVersionedBook, VERSIONED_BOOK_COLUMNS, type RunQuery } from '../../store/books-table.js';
import type { BookStoreDriver } from '../../store/driver.js';
import { isRefusedStatement } from '../../store/mysql/errors.js';
import { StatementRefusedError, type BatchStatements } from './statements.js';

/**
 * MariaDB 10.5 and later return the rows an INSERT wrote (`INSERT … RETURNING`), each with
 * the id it really got, whatever innodb_autoinc_lock_mode or Galera's id steps; MySQL has no
 * RETURNING. `version` is what `select version()` says: `10.11.6-MariaDB-0+deb12u1`, `8.0.36`.
 */
export function hasInsertReturning(version: string): boolean {
  const match = /^(\d+)\.(\d+)\.\d+-MariaDB/i.exec(version);
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 10 || (major === 10 && minor >= 5);
}

/**
 * The statements for the node in use as it is now: the inserts and claims only once it is known
 * to be MariaDB ≥ 10.5 (its version is asked on its first connection, which openStore makes
 * before the store's layers are put together).
 */
export function mysqlBatchStatements(driver: BookStoreDriver): BatchStatements {
  const { db } = driver;
  /** Undefined until a connection to the node in use has been set up. */
  const insertReturningInUse = () => {
    const version = driver.serverVersion?.();
    return version === undefined ? undefined : hasInsertReturning(version);
  };
  // `in (?, …)` with one placeholder per id: mysql2 sends the text with the values, no statement is prepared.
  const selectByIds = compiledPerCount((count) =>
    db
      .selectFrom('books')
      .select(VERSIONED_BOOK_COLUMNS)
      .where('id', 'in', Array.from({ length: count }, () => 0n))
      .compile(),
  );
  const insertMany = compiledPerCount((count) =>
    db
      .insertInto('books')
      .values(Array.from({ length: count }, () => ({ title: '', author: '', year: 0 })))
      .returning(VERSIONED_BOOK_COLUMNS)
      .compile(),
  );
  // INSERT IGNORE … RETURNING returns only the rows it wrote (a key that exists already is left
  // as it is, as by the claim of one key in src/store/idempotency-keys.ts).
  const claimMany = compiledPerCount((count) =>
    db
      .insertInto('idempotency_keys')
      .values(Array.from({ length: count }, () => ({ idempotency_key: '', fingerprint: '', owner: '', created_ms: driver.nowMs })))
      .ignore()
      .returning('owner')
      .compile(),
  );
  const insertBooks = async (run: RunQuery, books: readonly BookFields[]) => {
    // The node in use turned out to be one without RETURNING (a move to another host): refused
    // before anything is sent, so each book is written alone.
    if (insertReturningInUse() === false) throw new StatementRefusedError({ cause: new Error('this MySQL node has no INSERT … RETURNING') });
    try {
      return (await run(bind(insertMany(books.length), books.flatMap((book) => [book.title, book.author, book.year])))).rows.map(toVersionedBook);
    } catch (error) {
      // Refused by the server: the INSERT was rolled back. Anything else (a lost connection or
      // a timeout, after which it may still commit; a conflict) is passed on as it is.
      throw isRefusedStatement(error) ? new StatementRefusedError({ cause: error }) : error;
    }
  };
  const claimKeys = async (requests: readonly KeyedRequest[]) => {
    const parameters = requests.flatMap((request) => [request.key, request.fingerprint, request.owner]);
    const owners = new Set((await driver.runWrite(bind(claimMany(requests.length), parameters))).rows.map((row) => row.owner));
    return requests.filter((request) => owners.has(request.owner));
  };
  return {
    selectByIds: async (ids) => (await driver.runRead(bind(selectByIds(ids.length), ids))).rows.map(toVersionedBook),
    insertBooks: insertReturningInUse() ? insertBooks : undefined,
    claimKeys: insertReturningInUse() ? claimKeys : undefined,
    /** Every answer with its claimed key in one UPDATE (joined with the answers as a derived table). */
    async storeAnswers(run, answers) {
      const given = sql.join(
        answers.map(({ request, answer }, i) =>
          i === 0
            ? sql`select ${request.key} as k, ${request.owner} as o, ${answer.status} as s, ${answer.etag ?? null} as e, ${answer.body} as b`
            : sql`select ${request.key}, ${request.owner}, ${answer.status}, ${answer.etag ?? null}, ${answer.body}`,
        ),
        sql` union all `,
      );
      const query = sql`update idempotency_keys as stored join (${given}) as given
        on stored.idempotency_key = given.k and stored.owner = given.o
        set stored.status = given.s, stored.etag = given.e, stored.body = given.b`.compile(db);
      return Number((await run(query)).numAffectedRows ?? 0n);
    },
  };
}

/**
 * A query whose text depends only on how many values it takes (`in (?, …)`, `values (…), (…)`),
 * compiled once per count: the batches are at most MAX_BATCH (statements.ts), so at most that many texts.
 */
function compiledPerCount<Query>(compile: (count: number) => Query): (count: number) => Query {
  const texts = new Map<number, Query>();
  return (count) => {
    let query = texts.get(count);
    if (query === undefined) texts.set(count, (query = compile(count)));
    return query;
  };
}
