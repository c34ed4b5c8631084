// The MySQL / MariaDB database module: a mysql2 pool; no UPDATE … RETURNING, so inserts read
// the generated id and updates read the row back in their transaction; list rows written as
// JSON by bookJson() (MySQL's JSON functions reorder keys).
import { mysqlChanges } from './changes.js';
import { CompiledQuery, Kysely, MysqlDialect, sql } from 'kysely';
import { BOOK_COLUMNS, bookJson, type BookFields, type VersionedBook } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, toBigInt, toStoredBook, toVersionedBook, VERSIONED_BOOK_COLUMNS, type BookDatabase, type BookRow, type RunQuery } from '../books-table.js';
import { byIdQueries, updateById } from '../by-id.js';
import type { BookOperations, BooksTableDdl, BookStoreDriver, DatabaseModule } from '../driver.js';
import { bookQueries } from '../book-query.js';
import { idempotencyKeyQueries } from '../idempotency-keys.js';
import { missingDatabaseSentence } from '../nodes.js';
import { mysqlDurabilityWarnings } from './durability.js';
import { classifyMysqlError } from './errors.js';
import { indexExists, mysqlList } from './list.js';
import type { MysqlTarget } from './mysql-config.js';
import { createNodePools, mysqlPoolStats } from './pool.js';

const BOOKS_TABLE: BooksTableDdl = {
  idColumn: { type: 'bigint', build: (col) => col.primaryKey().autoIncrement() },
  // Full Unicode whatever the server's default character set; binary collation keeps text exact.
  tableOptions: sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`,
  // Up to 16 MiB.
  largeTextType: sql`mediumtext`,
  indexExists,
  list: mysqlList,
  changes: mysqlChanges,
};

const NOW_MS = sql<number>`cast(unix_timestamp(now(3)) * 1000 as signed)`;

/** Whether a multi-row INSERT's ids are consecutive (mode 0 or 1), and their step. */
const AUTO_INCREMENT_SETTINGS = CompiledQuery.raw('select @@innodb_autoinc_lock_mode as mode, @@auto_increment_increment as step') as CompiledQuery<{
  mode: number | string;
  step: number | string;
}>;

export const mysql: DatabaseModule<MysqlTarget> = {
  open(target, options): BookStoreDriver {
    const { nodes } = target;
    const { pool, selector, versionInUse, mariaDbInUse, rawConnection } = createNodePools(nodes, options);
    const db = new Kysely<BookDatabase>({ dialect: new MysqlDialect({ pool }) });
    const run: RunQuery = <R>(query: CompiledQuery<R>) => db.executeQuery(query);
    const byId = byIdQueries(db);
    const list = bookQueries(db, mysqlList);
    // Compiled once; parameters in the order of the values: title, author, year.
    const insert = db.insertInto('books').values({ title: '', author: '', year: 0 }).compile();
    /** Inserts a book on `trx`'s connection. No INSERT … RETURNING: the generated id comes back with the result; a new book is at version 1. */
    async function insertOne(trx: RunQuery, { title, author, year }: BookFields): Promise<VersionedBook> {
      const result = await trx(bind(insert, [title, author, year]));
      return { id: BigInt(result.insertId as bigint), title, author, year, version: 1 };
    }
    /** The insert and the update on `trx`'s connection, inside a transaction the caller runs. */
    const writesIn = (trx: RunQuery): Pick<BookOperations, 'insertBook' | 'insertBooks' | 'updateBook'> => ({
      insertBook: (fields) => insertOne(trx, fields),
      // One multi-row INSERT where InnoDB hands its rows consecutive ids (innodb_autoinc_lock_mode
      // 0 or 1: the first id comes back, the others follow it a step of auto_increment_increment
      // apart); read back in the transaction, so the answer is our own write. Under mode 2
      // (interleaved, Galera's) the ids could be anyone's: one insert each.
      async insertBooks(books) {
        const { mode, step } = (await trx(AUTO_INCREMENT_SETTINGS)).rows[0]!;
        if (Number(mode) >= 2) {
          const written = [];
          for (const book of books) written.push(await insertOne(trx, book));
          return written;
        }
        const result = await trx(db.insertInto('books').values(books.map(({ title, author, year }) => ({ title, author, year }))).compile());
        const first = BigInt(result.insertId as bigint);
        const ids = books.map((_, i) => first + BigInt(i) * BigInt(step));
        const { rows } = await trx(db.selectFrom('books').select(VERSIONED_BOOK_COLUMNS).where('id', 'in', ids).orderBy('id').compile());
        const written = rows.map(toVersionedBook);
        if (written.length !== books.length || written.some((book, i) => book.id !== ids[i] || book.title !== books[i]!.title || book.year !== books[i]!.year)) {
          throw new Error('a multi-row insert\'s ids were not the consecutive ones innodb_autoinc_lock_mode promises');
        }
        return written;
      },
      // No UPDATE … RETURNING: update and read back in the caller's transaction, so the answer is our own write.
      async updateBook(id, changes, ifVersion) {
        const { numAffectedRows } = await trx(updateById(db, id, changes, ifVersion).compile());
        if ((numAffectedRows ?? 0n) === 0n) return undefined;
        const row = (await trx(db.selectFrom('books').select(VERSIONED_BOOK_COLUMNS).where('id', '=', id).compile())).rows[0];
        return row && toVersionedBook(row);
      },
    });
    const transaction: BookStoreDriver['transaction'] = (work) =>
      db.transaction().execute((trx) => {
        const inTransaction: RunQuery = (query) => trx.executeQuery(query);
        return work({ run: inTransaction, ...byId(inTransaction, inTransaction), ...writesIn(inTransaction) });
      });
    const page = db.selectFrom('books').select(BOOK_COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).compile();
    return {
      db,
      booksTable: BOOKS_TABLE,
      nowMs: NOW_MS,
      ...byId(run, run),
      insertBook: (fields) => writesIn(run).insertBook(fields),
      updateBook: (id, changes, ifVersion) => transaction((tx) => tx.updateBook(id, changes, ifVersion)),
      transaction,
      idempotencyKeys: idempotencyKeyQueries(db, NOW_MS, 'insert-ignore'),
      runWrite: run,
      runRead: run,
      async selectPage(afterId, limit): Promise<BookPage> {
        const books: readonly BookRow[] = (await run(bind(page, [afterId, limit]))).rows;
        const last = books.at(-1);
        return {
          json: books.map((row) => bookJson(toStoredBook(row))).join(','),
          count: books.length,
          lastId: last === undefined ? undefined : toBigInt(last.id),
        };
      },
      selectBooks: (query) => list.selectBooks(run, query),
      poolStats: () => mysqlPoolStats(selector.poolInUse, options),
      nodeUse: () => ({ nodes: selector.nodes.map((node) => node.name), inUse: selector.inUse.name }),
      databaseSystem: () => (mariaDbInUse() ? 'mariadb' : 'mysql'),
      serverVersion: versionInUse,
      durabilityWarnings: () => mysqlDurabilityWarnings(db, selector.inUse.name),
      mysqlConnection: rawConnection,
      classifyError: classifyMysqlError,
      // ER_BAD_DB_ERROR: the server answered, without DB_URL's database.
      missingDatabase: (error) =>
        (error as { code?: unknown } | undefined)?.code === 'ER_BAD_DB_ERROR'
          ? missingDatabaseSentence(target.nodes[0]!, ({ host, port, user, database }) => `mariadb -h ${host} -P ${port}${user ? ` -u ${user}` : ''} -p -e 'CREATE DATABASE \`${database}\`'`)
          : undefined,
      openForMigrations: (migrationOptions) => mysql.open(target, migrationOptions),
      close: () => db.destroy(),
    };
  },
};

