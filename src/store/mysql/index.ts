// The MySQL / MariaDB database module: a mysql2 pool; no RETURNING, so inserts read the
// generated id and updates read the row back in their transaction; list rows written as JSON
// by bookJson() (MySQL's JSON functions reorder keys).
import { Kysely, MysqlDialect, sql, type CompiledQuery } from 'kysely';
import { BOOK_COLUMNS, bookJson } from '../../books/book.js';
import type { BookPage } from '../book-store.js';
import { bind, toBigInt, toStoredBook, type BookDatabase, type BookRow } from '../books-table.js';
import { byIdQueries } from '../by-id.js';
import type { BooksTableDdl, BookStoreDriver, DatabaseModule } from '../driver.js';
import { classifyMysqlError } from './errors.js';
import type { MysqlTarget } from './mysql-config.js';
import { createNodePools, mysqlPoolStats } from './pool.js';

const BOOKS_TABLE: BooksTableDdl = {
  idColumn: { type: 'bigint', build: (col) => col.primaryKey().autoIncrement() },
  // Full Unicode whatever the server's default character set; binary collation keeps text exact.
  tableOptions: sql`engine = InnoDB default charset = utf8mb4 collate = utf8mb4_bin`,
};

export const mysql: DatabaseModule<MysqlTarget> = {
  open(target, options): BookStoreDriver {
    const { nodes } = target;
    const { pool, selector } = createNodePools(nodes, options);
    const db = new Kysely<BookDatabase>({ dialect: new MysqlDialect({ pool }) });
    const run = <R>(query: CompiledQuery<R>) => db.executeQuery(query);
    // Compiled once; parameters in the order of the values: title, author, year.
    const insert = db.insertInto('books').values({ title: '', author: '', year: 0 }).compile();
    const page = db.selectFrom('books').select(BOOK_COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).compile();
    return {
      db,
      booksTable: BOOKS_TABLE,
      nowMs: sql<number>`cast(unix_timestamp(now(3)) * 1000 as signed)`,
      openForMigrations: (migrationOptions) => mysql.open(target, migrationOptions),
      ...byIdQueries(db, run, run),
      async insertBook({ title, author, year }) {
        const result = await run(bind(insert, [title, author, year]));
        // No INSERT … RETURNING: the generated id comes back with the result.
        return { id: BigInt(result.insertId as bigint), title, author, year };
      },
      // No UPDATE … RETURNING: update and read back in one transaction, so the answer is our own write.
      updateBook: (id, changes) =>
        db.transaction().execute(async (trx) => {
          await trx.updateTable('books').set(changes).where('id', '=', id).execute();
          const row = await trx.selectFrom('books').select(BOOK_COLUMNS).where('id', '=', id).executeTakeFirst();
          return row && toStoredBook(row);
        }),
      // `in (?, …)` with one placeholder per id: mysql2 sends the text with the values, no statement is prepared.
      selectByIds: async (ids) => (await run(db.selectFrom('books').select(BOOK_COLUMNS).where('id', 'in', ids).compile())).rows.map(toStoredBook),
      async selectPage(afterId, limit): Promise<BookPage> {
        const books: readonly BookRow[] = (await run(bind(page, [afterId, limit]))).rows;
        const last = books.at(-1);
        return {
          json: books.map((row) => bookJson(toStoredBook(row))).join(','),
          count: books.length,
          lastId: last === undefined ? undefined : toBigInt(last.id),
        };
      },
      poolStats: () => mysqlPoolStats(selector.poolInUse, options),
      nodeUse: () => ({ nodes: selector.nodes.map((node) => node.name), inUse: selector.inUse.name }),
      classifyError: classifyMysqlError,
      close: () => db.destroy(),
    };
  },
};
