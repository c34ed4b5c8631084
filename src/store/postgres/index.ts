// The PostgreSQL database module: a pg pool with named prepared statements; RETURNING for
// writes; a whole list page as one row, its JSON joined by PostgreSQL.
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import pg from 'pg';
import { BOOK_COLUMNS, type BookFields } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, toVersionedBook, VERSIONED_BOOK_COLUMNS, type BookDatabase, type RunQuery } from '../books-table.js';
import { byIdQueries } from '../by-id.js';
import { StatementRefusedError } from '../errors.js';
import { DEFAULT_POOL_MAX, type BooksTableDdl, type BookStoreDriver, type DatabaseModule } from '../driver.js';
import { idempotencyKeyQueries } from '../idempotency-keys.js';
import { returningWrites } from '../returning.js';
import { classifyPostgresError } from './errors.js';
import type { PostgresTarget } from './postgres-config.js';
import { createNodePools } from './pool.js';

const NOW_MS = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::int8`;

const BOOKS_TABLE: BooksTableDdl = {
  idColumn: { type: 'bigint', build: (col) => col.primaryKey().generatedByDefaultAsIdentity() },
  tableOptions: undefined,
};

/** A whole page in one row: its books' JSON already joined, how many, and the last id. */
interface AggregatedPage {
  json: string;
  count: bigint | number;
  lastId: bigint | null;
}

export const postgres: DatabaseModule<PostgresTarget> = {
  open(target, options): BookStoreDriver {
    const { nodes, sessionAttrs } = target;
    const { pool, selector } = createNodePools(nodes, sessionAttrs, options);
    const db = new Kysely<BookDatabase>({ dialect: new PostgresDialect({ pool }) });
    // Each query on a pooled connection of its own: writes commit in parallel.
    const run: RunQuery = <R>(query: CompiledQuery<R>) => db.executeQuery(query);
    const byId = byIdQueries(db);
    const returning = returningWrites(db);
    // row_to_json writes each book in BOOK_COLUMNS order (the subquery's), the id exact, and
    // string_agg joins the page into one text: a page of 1,000 books is one value, not 1,000
    // row objects (that garbage grew the heap when listing large collections:
    // docs/benchmarks-changes.md).
    const page = db
      .selectFrom(db.selectFrom('books').select(BOOK_COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).as('b'))
      .select([
        sql<string>`coalesce(string_agg(row_to_json(b)::text, ',' order by b.id), '')`.as('json'),
        sql<bigint>`count(*)`.as('count'),
        sql<bigint | null>`max(b.id)`.as('lastId'),
      ])
      .compile();
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
    // Keyed writes arriving together (batched-book-store.ts): their keys claimed in one
    // statement, their answers stored in one.
    const claimMany = db
      .insertInto('idempotency_keys')
      .columns(['idempotency_key', 'fingerprint', 'owner', 'created_ms'])
      .expression(
        sql`select k, f, o, ${NOW_MS} from unnest(${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[]) as t(k, f, o)`,
      )
      .onConflict((conflict) => conflict.column('idempotency_key').doNothing())
      .returning('owner')
      .compile();
    const answerMany = sql`update idempotency_keys as stored set status = given.status, etag = given.etag, body = given.body
      from unnest(${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[], ${sql.val<number[]>([])}::int4[],
        ${sql.val<string[]>([])}::text[], ${sql.val<string[]>([])}::text[]) as given(key, owner, status, etag, body)
      where stored.idempotency_key = given.key and stored.owner = given.owner`.compile(db);
    const insertBooksOn = (runOn: RunQuery) => async (books: readonly BookFields[]) => {
      const columns = [books.map((book) => book.title), books.map((book) => book.author), books.map((book) => book.year)];
      try {
        return (await runOn(bind(insertMany, columns))).rows.map(toVersionedBook);
      } catch (error) {
        // An answer from the server (not a lost connection or a timeout, after which the
        // statement may still commit) that is not a conflict: the INSERT was rolled back.
        const kind = classifyPostgresError(error);
        throw error instanceof pg.DatabaseError && kind !== 'unavailable' && kind !== 'conflict'
          ? new StatementRefusedError({ cause: error })
          : error;
      }
    };
    const max = options.poolMax ?? DEFAULT_POOL_MAX;
    return {
      db,
      booksTable: BOOKS_TABLE,
      nowMs: NOW_MS,
      openForMigrations: (migrationOptions) => postgres.open(target, migrationOptions),
      ...byId(run, run),
      ...returning(run),
      transaction: (work) =>
        db.transaction().execute((trx) => {
          const inTransaction: RunQuery = (query) => trx.executeQuery(query);
          return work({
            run: inTransaction,
            ...byId(inTransaction, inTransaction),
            ...returning(inTransaction),
            insertBooks: insertBooksOn(inTransaction),
            async storeAnswers(answers) {
              const columns = [
                answers.map(({ request }) => request.key),
                answers.map(({ request }) => request.owner),
                answers.map(({ answer }) => answer.status),
                answers.map(({ answer }) => answer.etag ?? null),
                answers.map(({ answer }) => answer.body),
              ];
              return Number((await inTransaction(bind(answerMany, columns))).numAffectedRows ?? 0n);
            },
          });
        }),
      idempotencyKeys: idempotencyKeyQueries(db, NOW_MS, 'on-conflict'),
      runWrite: run,
      runRead: run,
      selectByIds: async (ids) => (await run(bind(byIds, [ids]))).rows.map(toVersionedBook),
      insertBooks: insertBooksOn(run),
      async claimKeys(requests) {
        const columns = [requests.map((r) => r.key), requests.map((r) => r.fingerprint), requests.map((r) => r.owner)];
        const owners = new Set((await run(bind(claimMany, columns))).rows.map((row) => row.owner));
        return requests.filter((request) => owners.has(request.owner));
      },
      async selectPage(afterId, limit): Promise<BookPage> {
        const { json, count, lastId } = (await run(bind(page, [afterId, limit]))).rows[0] as AggregatedPage;
        return { json, count: Number(count), lastId: lastId ?? undefined };
      },
      poolStats() {
        const inUse = selector.poolInUse;
        return { total: inUse.totalCount, idle: inUse.idleCount, waiting: inUse.waitingCount, max };
      },
      nodeUse: () => ({ nodes: selector.nodes.map((node) => node.name), inUse: selector.inUse.name }),
      databaseSystem: () => 'postgresql',
      classifyError: classifyPostgresError,
      close: () => db.destroy(),
    };
  },
};
