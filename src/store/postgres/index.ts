// The PostgreSQL database module: a pg pool with named prepared statements; RETURNING for
// writes; a whole list page as one row, its JSON joined by PostgreSQL.
import { postgresChanges } from './changes.js';
import { Kysely, PostgresDialect, sql, type CompiledQuery } from 'kysely';
import { BOOK_COLUMNS } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, type BookDatabase, type RunQuery } from '../books-table.js';
import { byIdQueries } from '../by-id.js';
import { DEFAULT_POOL_MAX, type BooksTableDdl, type BookStoreDriver, type DatabaseModule } from '../driver.js';
import { bookQueries } from '../book-query.js';
import { idempotencyKeyQueries } from '../idempotency-keys.js';
import { missingDatabaseSentence } from '../nodes.js';
import { postgresDurabilityWarnings } from './durability.js';
import { returningWrites } from '../returning.js';
import { classifyPostgresError } from './errors.js';
import { postgresList } from './list.js';
import type { PostgresTarget } from './postgres-config.js';
import { createNodePools } from './pool.js';

const NOW_MS = sql<number>`(extract(epoch from clock_timestamp()) * 1000)::int8`;

const BOOKS_TABLE: BooksTableDdl = {
  idColumn: { type: 'bigint', build: (col) => col.primaryKey().generatedByDefaultAsIdentity() },
  tableOptions: undefined,
  list: postgresList,
  changes: postgresChanges,
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
    const { pool, selector, connect } = createNodePools(nodes, sessionAttrs, options);
    const db = new Kysely<BookDatabase>({ dialect: new PostgresDialect({ pool }) });
    // Each query on a pooled connection of its own: writes commit in parallel.
    const run: RunQuery = <R>(query: CompiledQuery<R>) => db.executeQuery(query);
    const byId = byIdQueries(db);
    const returning = returningWrites(db);
    const list = bookQueries(db, postgresList);
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
          return work({ run: inTransaction, ...byId(inTransaction, inTransaction), ...returning(inTransaction) });
        }),
      idempotencyKeys: idempotencyKeyQueries(db, NOW_MS, 'on-conflict'),
      runWrite: run,
      runRead: run,
      async selectPage(afterId, limit): Promise<BookPage> {
        const { json, count, lastId } = (await run(bind(page, [afterId, limit]))).rows[0] as AggregatedPage;
        return { json, count: Number(count), lastId: lastId ?? undefined };
      },
      selectBooks: (query) => list.selectBooks(run, query),
      poolStats() {
        const inUse = selector.poolInUse;
        return { total: inUse.totalCount, idle: inUse.idleCount, waiting: inUse.waitingCount, max };
      },
      nodeUse: () => ({ nodes: selector.nodes.map((node) => node.name), inUse: selector.inUse.name }),
      databaseSystem: () => 'postgresql',
      durabilityWarnings: () => postgresDurabilityWarnings(db, selector.inUse.name),
      postgresClient: connect,
      classifyError: classifyPostgresError,
      // invalid_catalog_name: the server answered, without DB_URL's database.
      missingDatabase: (error) =>
        (error as { code?: unknown } | undefined)?.code === '3D000'
          ? missingDatabaseSentence(nodes[0]!, ({ host, port, user, database }) => `createdb -h ${host} -p ${port}${user ? ` -U ${user}` : ''} ${database}`)
          : undefined,
      close: () => db.destroy(),
    };
  },
};
