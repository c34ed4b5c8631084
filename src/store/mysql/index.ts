// The MySQL / MariaDB database module: a mysql2 pool; no UPDATE … RETURNING, so inserts read
// the generated id and updates read the row back in their transaction; on MariaDB ≥ 10.5 the
// creates (and Idempotency-Key claims) that arrive together are one INSERT … RETURNING; list rows written as JSON by
// bookJson() (MySQL's JSON functions reorder keys).
import { Kysely, MysqlDialect, sql, type CompiledQuery } from 'kysely';
import { BOOK_COLUMNS, bookJson, type BookFields } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, toBigInt, toStoredBook, toVersionedBook, VERSIONED_BOOK_COLUMNS, type BookDatabase, type BookRow, type RunQuery } from '../books-table.js';
import { byIdQueries, updateById } from '../by-id.js';
import type { BookOperations, BooksTableDdl, BookStoreDriver, DatabaseModule, TransactionScope } from '../driver.js';
import { StatementRefusedError } from '../errors.js';
import { idempotencyKeyQueries } from '../idempotency-keys.js';
import { classifyMysqlError, isRefusedStatement } from './errors.js';
import type { MysqlTarget } from './mysql-config.js';
import { createNodePools, mysqlPoolStats } from './pool.js';

const BOOKS_TABLE: BooksTableDdl = {
  idColumn: { type: 'bigint', build: (col) => col.primaryKey().autoIncrement() },
  // Full Unicode whatever the server's default character set; binary collation keeps text exact.
  tableOptions: sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`,
  async indexExists(db, table, index) {
    const { rows } = await sql<{ found: number }>`select count(*) as found from information_schema.statistics
      where table_schema = database() and table_name = ${table} and index_name = ${index}`.execute(db);
    return Number(rows[0]?.found ?? 0) > 0;
  },
};

const NOW_MS = sql<number>`cast(unix_timestamp(now(3)) * 1000 as signed)`;

export const mysql: DatabaseModule<MysqlTarget> = {
  open(target, options): BookStoreDriver {
    const { nodes } = target;
    const { pool, selector, insertReturningInUse, mariaDbInUse } = createNodePools(nodes, options);
    const db = new Kysely<BookDatabase>({ dialect: new MysqlDialect({ pool }) });
    const run: RunQuery = <R>(query: CompiledQuery<R>) => db.executeQuery(query);
    const byId = byIdQueries(db);
    // Compiled once; parameters in the order of the values: title, author, year.
    const insert = db.insertInto('books').values({ title: '', author: '', year: 0 }).compile();
    /** The insert and the update on `trx`'s connection, inside a transaction the caller runs. */
    const writesIn = (trx: RunQuery): Pick<BookOperations, 'insertBook' | 'updateBook'> => ({
      async insertBook({ title, author, year }) {
        const result = await trx(bind(insert, [title, author, year]));
        // No INSERT … RETURNING: the generated id comes back with the result; a new book is at version 1.
        return { id: BigInt(result.insertId as bigint), title, author, year, version: 1 };
      },
      // No UPDATE … RETURNING: update and read back in the caller's transaction, so the answer is our own write.
      async updateBook(id, changes, ifVersion) {
        const { numAffectedRows } = await trx(updateById(db, id, changes, ifVersion).compile());
        if ((numAffectedRows ?? 0n) === 0n) return undefined;
        const row = (await trx(db.selectFrom('books').select(VERSIONED_BOOK_COLUMNS).where('id', '=', id).compile())).rows[0];
        return row && toVersionedBook(row);
      },
    });
    /**
     * MariaDB ≥ 10.5: several books in one INSERT … RETURNING, each row with the id it got.
     * One text per number of books, compiled once.
     */
    const compileInsertMany = (count: number) =>
      db
        .insertInto('books')
        .values(Array.from({ length: count }, () => ({ title: '', author: '', year: 0 })))
        .returning(VERSIONED_BOOK_COLUMNS)
        .compile();
    const insertMany = compiledPerCount(compileInsertMany);
    // The read of several ids (selectByIds): one text per number of ids, compiled once.
    const selectByIds = compiledPerCount((count) =>
      db
        .selectFrom('books')
        .select(VERSIONED_BOOK_COLUMNS)
        .where('id', 'in', Array.from({ length: count }, () => 0n))
        .compile(),
    );
    const insertBooksOn = (runOn: RunQuery) => async (books: readonly BookFields[]) => {
      // The node in use turned out to be one without RETURNING (a move to another host): refused
      // before anything is sent, so each book is written alone.
      if (insertReturningInUse() === false) throw new StatementRefusedError({ cause: new Error('this MySQL node has no INSERT … RETURNING') });
      try {
        return (await runOn(bind(insertMany(books.length), books.flatMap((book) => [book.title, book.author, book.year])))).rows.map(toVersionedBook);
      } catch (error) {
        // Refused by the server: the INSERT was rolled back. Anything else (a lost connection or
        // a timeout, after which it may still commit; a conflict) is passed on as it is.
        throw isRefusedStatement(error) ? new StatementRefusedError({ cause: error }) : error;
      }
    };
    /** Every answer with its claimed key in one UPDATE (joined with the answers as a derived table): how many keys were still held. */
    const storeAnswersOn =
      (runOn: RunQuery): NonNullable<TransactionScope['storeAnswers']> =>
      async (answers) => {
        const given = sql.join(
          answers.map(
            ({ request, answer }, i) =>
              i === 0
                ? sql`select ${request.key} as k, ${request.owner} as o, ${answer.status} as s, ${answer.etag ?? null} as e, ${answer.body} as b`
                : sql`select ${request.key}, ${request.owner}, ${answer.status}, ${answer.etag ?? null}, ${answer.body}`,
          ),
          sql` union all `,
        );
        const query = sql`update idempotency_keys as stored join (${given}) as given
          on stored.idempotency_key = given.k and stored.owner = given.o
          set stored.status = given.s, stored.etag = given.e, stored.body = given.b`.compile(db);
        return Number((await runOn(query)).numAffectedRows ?? 0n);
      };
    const transaction: BookStoreDriver['transaction'] = (work) =>
      db.transaction().execute((trx) => {
        const inTransaction: RunQuery = (query) => trx.executeQuery(query);
        return work({
          run: inTransaction,
          ...byId(inTransaction, inTransaction),
          ...writesIn(inTransaction),
          // Used only where the driver gives insertBooks (below); refused, nothing sent, on a node without RETURNING.
          insertBooks: insertBooksOn(inTransaction),
          storeAnswers: storeAnswersOn(inTransaction),
        });
      });
    const insertBooks = insertBooksOn(run);
    // MariaDB ≥ 10.5: several Idempotency-Keys claimed in one INSERT IGNORE … RETURNING, which
    // returns only the rows it wrote (a key that exists already is left as it is, as by the
    // claim of one key in idempotency-keys.ts).
    const claimMany = compiledPerCount((count) =>
      db
        .insertInto('idempotency_keys')
        .values(Array.from({ length: count }, () => ({ idempotency_key: '', fingerprint: '', owner: '', created_ms: NOW_MS })))
        .ignore()
        .returning('owner')
        .compile(),
    );
    const claimKeys: NonNullable<BookStoreDriver['claimKeys']> = async (requests) => {
      const parameters = requests.flatMap((request) => [request.key, request.fingerprint, request.owner]);
      const owners = new Set((await run(bind(claimMany(requests.length), parameters))).rows.map((row) => row.owner));
      return requests.filter((request) => owners.has(request.owner));
    };
    const page = db.selectFrom('books').select(BOOK_COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).compile();
    return {
      db,
      booksTable: BOOKS_TABLE,
      nowMs: NOW_MS,
      openForMigrations: (migrationOptions) => mysql.open(target, migrationOptions),
      ...byId(run, run),
      insertBook: (fields) => writesIn(run).insertBook(fields),
      updateBook: (id, changes, ifVersion) => transaction((tx) => tx.updateBook(id, changes, ifVersion)),
      transaction,
      idempotencyKeys: idempotencyKeyQueries(db, NOW_MS, 'insert-ignore'),
      runWrite: run,
      runRead: run,
      // `in (?, …)` with one placeholder per id: mysql2 sends the text with the values, no statement is prepared.
      selectByIds: async (ids) => (await run(bind(selectByIds(ids.length), ids))).rows.map(toVersionedBook),
      async selectPage(afterId, limit): Promise<BookPage> {
        const books: readonly BookRow[] = (await run(bind(page, [afterId, limit]))).rows;
        const last = books.at(-1);
        return {
          json: books.map((row) => bookJson(toStoredBook(row))).join(','),
          count: books.length,
          lastId: last === undefined ? undefined : toBigInt(last.id),
        };
      },
      /**
       * Only once the node in use is known to be MariaDB ≥ 10.5 (asked on its first connection,
       * which openStore makes before the store's layers look): MySQL's multi-row INSERT does
       * not say which id each row got (consecutive only in some innodb_autoinc_lock_mode
       * settings, stepped on Galera), so there each book is its own INSERT.
       */
      get insertBooks() {
        return insertReturningInUse() ? insertBooks : undefined;
      },
      /** Likewise only on MariaDB ≥ 10.5: MySQL's INSERT IGNORE does not say which rows it wrote. */
      get claimKeys() {
        return insertReturningInUse() ? claimKeys : undefined;
      },
      poolStats: () => mysqlPoolStats(selector.poolInUse, options),
      nodeUse: () => ({ nodes: selector.nodes.map((node) => node.name), inUse: selector.inUse.name }),
      databaseSystem: () => (mariaDbInUse() ? 'mariadb' : 'mysql'),
      classifyError: classifyMysqlError,
      close: () => db.destroy(),
    };
  },
};

/**
 * A query whose text depends only on how many values it takes (`in (?, …)`, `values (…), (…)`),
 * compiled once per count: the batches are at most 64 (batched-book-store.ts), so at most 64 texts.
 */
function compiledPerCount<Query>(compile: (count: number) => Query): (count: number) => Query {
  const texts = new Map<number, Query>();
  return (count) => {
    let query = texts.get(count);
    if (query === undefined) texts.set(count, (query = compile(count)));
    return query;
  };
}
