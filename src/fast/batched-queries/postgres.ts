// PostgreSQL's batch statements for the speed path batched-queries (statements.ts; index.ts
// says why and plugs them in through FastPaths.shareQueries): each one text whatever the
// number of books or keys (arrays as parameters, unnest), so each one prepared statement. They
// stand in for the PostgreSQL module's one-book statements (src/store/postgres/index.ts), which
// is where they were before; it keeps what one request sends.
import { sql } from 'kysely';
import pg from 'pg';
import { bind, toVersionedBook, VERSIONED_BOOK_COLUMNS, type RunQuery } from '../../store/books-table.js';
import type { BookStoreDriver } from '../../store/driver.js';
import { StatementRefusedError, type BatchStatements } from './statements.js';

export function postgresBatchStatements(driver: BookStoreDriver): BatchStatements {
  const { db, nowMs } = driver;
  // One text whatever the number of ids (an array parameter), so one prepared statement.
  const byIds = db
    .selectFrom('books')
    .select(VERSIONED_BOOK_COLUMNS)
    .where('id', '=', sql<bigint>`any(${sql.val<bigint[]>([])}::int8[])`)
    .compile();
  // Several books in one statement: three arrays, one text whatever their length.
  const insertMany = db
    .insertInto('books')
    .columns(['title', 'author', 'year'])
    .expression(
      sql`select * from unnest(${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[], ${sql.val<number[]>([])}::int4[])`,
    )
    .returning(VERSIONED_BOOK_COLUMNS)
    .compile();
  // Keyed writes arriving together: their keys claimed in one statement, their answers stored in one.
  const claimMany = db
    .insertInto('idempotency_keys')
    .columns(['idempotency_key', 'fingerprint', 'owner', 'created_ms'])
    .expression(
      sql`select k, f, o, ${nowMs} from unnest(${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[]) as t(k, f, o)`,
    )
    .onConflict((conflict) => conflict.column('idempotency_key').doNothing())
    .returning('owner')
    .compile();
  const answerMany = sql`update idempotency_keys as stored set status = given.status, etag = given.etag, body = given.body
    from unnest(${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[], ${sql.val<number[]>([])}::int4[],
      ${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[]) as given(key, owner, status, etag, body)
    where stored.idempotency_key = given.key and stored.owner = given.owner`.compile(db);

  return {
    selectByIds: async (ids) => (await driver.runRead(bind(byIds, [ids]))).rows.map(toVersionedBook),
    async insertBooks(run: RunQuery, books) {
      const columns = [books.map((book) => book.title), books.map((book) => book.author), books.map((book) => book.year)];
      try {
        return (await run(bind(insertMany, columns))).rows.map(toVersionedBook);
      } catch (error) {
        // An answer from the server (not a lost connection or a timeout, after which the
        // statement may still commit) that is not a conflict: the INSERT was rolled back.
        const kind = driver.classifyError(error);
        throw error instanceof pg.DatabaseError && kind !== 'unavailable' && kind !== 'conflict' ? new StatementRefusedError({ cause: error }) : error;
      }
    },
    async claimKeys(requests) {
      const columns = [requests.map((r) => r.key), requests.map((r) => r.fingerprint), requests.map((r) => r.owner)];
      const owners = new Set((await driver.runWrite(bind(claimMany, columns))).rows.map((row) => row.owner));
      return requests.filter((request) => owners.has(request.owner));
    },
    async storeAnswers(run, answers) {
      const columns = [
        answers.map(({ request }) => request.key),
        answers.map(({ request }) => request.owner),
        answers.map(({ answer }) => answer.status),
        answers.map(({ answer }) => answer.etag ?? null),
        answers.map(({ answer }) => answer.body),
      ];
      return Number((await run(bind(answerMany, columns))).numAffectedRows ?? 0n);
    },
  };
}
