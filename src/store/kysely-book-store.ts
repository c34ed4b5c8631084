// The BookStore over Kysely: one implementation for SQLite, PostgreSQL and MySQL.
import { sql, type CompiledQuery, type Generated, type Kysely, type QueryResult } from 'kysely';
import { PLUCK_MARKER } from './dialects/common.js';
import type { SqliteExecutor } from './dialects/sqlite.js';
import { GroupCommit } from './group-commit.js';
import { bookJson, type BookFields, type StoredBook } from '../books/book.js';
import type { BookPage, BookStore, PoolStats, StoreDialect } from './book-store.js';
import { classifyStoreError } from './errors.js';

interface BooksTable {
  id: Generated<bigint>;
  title: string;
  author: string;
  year: number;
}

export interface BookDatabase {
  books: BooksTable;
}

/** What the drivers return: ids as bigint (SQLite, pg) or string/number (mysql2), years as number or bigint. */
interface BookRow {
  id: bigint | string | number;
  title: string;
  author: string;
  year: number | bigint;
}

const COLUMNS = ['id', 'title', 'author', 'year'] as const;

/** A query compiled once at startup; each call only binds new parameters. */
function bind<R>(query: CompiledQuery<R>, parameters: readonly unknown[]): CompiledQuery<R> {
  return { ...query, parameters };
}

export class KyselyBookStore implements BookStore {
  /** SQLite only: concurrent writes share one transaction and one fsync. */
  private readonly groupCommit: GroupCommit | undefined;
  // The hot queries, built and compiled once instead of on every request.
  private readonly selectById;
  private readonly selectPage;
  private readonly insertBook;
  private readonly deleteById;

  constructor(
    private readonly db: Kysely<BookDatabase>,
    readonly dialect: StoreDialect,
    private readonly readPoolStats: () => PoolStats | undefined = () => undefined,
    /** SQLite: compiled queries run synchronously on the connection, not through Kysely's driver. */
    private readonly sqlite?: SqliteExecutor,
  ) {
    this.groupCommit = sqlite ? new GroupCommit(sqlite.database) : undefined;
    this.selectById = db.selectFrom('books').select(COLUMNS).where('id', '=', 0n).compile();
    this.selectPage = compileSelectPage(db, dialect);
    const insert = db.insertInto('books').values({ title: '', author: '', year: 0 });
    // Parameters in the order of the values above: title, author, year.
    this.insertBook = dialect === 'mysql' ? insert.compile() : insert.returning(COLUMNS).compile();
    this.deleteById = db.deleteFrom('books').where('id', '=', 0n).compile();
  }

  /** Runs one query that changes nothing. */
  private read<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    const { sqlite } = this;
    return sqlite ? Promise.resolve(sqlite.execute(query)) : this.db.executeQuery(query);
  }

  /** Runs one write: batched with its neighbours on SQLite, on its own elsewhere (pools commit in parallel). */
  private write<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    const { sqlite, groupCommit } = this;
    return sqlite && groupCommit ? groupCommit.run(() => sqlite.execute(query)) : this.db.executeQuery(query);
  }

  poolStats(): PoolStats | undefined {
    // SQLite has one connection; queries on it run synchronously, so between two event-loop
    // turns it is idle and only writes queued for the next group commit are waiting.
    if (this.groupCommit) return { total: 1, idle: 1, waiting: this.groupCommit.waiting, max: 1 };
    return this.readPoolStats();
  }

  async create(fields: BookFields): Promise<StoredBook> {
    const values = { title: fields.title, author: fields.author, year: fields.year };
    try {
      const query = bind(this.insertBook, [values.title, values.author, values.year]);
      if (this.dialect === 'mysql') {
        // MySQL has no INSERT … RETURNING; the generated id comes back with the result.
        const result = await this.db.executeQuery(query);
        return { id: BigInt(result.insertId as bigint), ...values };
      }
      const result = await this.write(query);
      return toStoredBook(result.rows[0] as unknown as BookRow);
    } catch (error) {
      return classifyStoreError(error);
    }
  }

  async listPageJson(afterId: bigint, limit: number): Promise<BookPage> {
    try {
      const { rows } = await this.read(bind(this.selectPage, [afterId, limit]));
      switch (this.dialect) {
        case 'sqlite': {
          const books = rows as unknown as string[];
          return { json: books.join(','), count: books.length, lastId: idOfBookJson(books.at(-1)) };
        }
        case 'postgres': {
          const page = rows[0] as unknown as AggregatedPage;
          return { json: page.json, count: Number(page.count), lastId: page.lastId ?? undefined };
        }
        case 'mysql': {
          const books = rows as unknown as BookRow[];
          const last = books.at(-1);
          return {
            json: books.map((row) => bookJson(toStoredBook(row))).join(','),
            count: books.length,
            lastId: last === undefined ? undefined : toBigInt(last.id),
          };
        }
      }
    } catch (error) {
      return classifyStoreError(error);
    }
  }

  async get(id: bigint): Promise<StoredBook | undefined> {
    try {
      const { rows } = await this.read(bind(this.selectById, [id]));
      const row = rows[0];
      return row && toStoredBook(row);
    } catch (error) {
      return classifyStoreError(error);
    }
  }

  async update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined> {
    const values: Partial<BookFields> = {};
    if (changes.title !== undefined) values.title = changes.title;
    if (changes.author !== undefined) values.author = changes.author;
    if (changes.year !== undefined) values.year = changes.year;
    if (Object.keys(values).length === 0) return this.get(id);
    try {
      if (this.dialect === 'mysql') {
        // No UPDATE … RETURNING: update and read back in one transaction, so the answer is our own write.
        return await this.db.transaction().execute(async (trx) => {
          await trx.updateTable('books').set(values).where('id', '=', id).execute();
          const row = await trx.selectFrom('books').select(COLUMNS).where('id', '=', id).executeTakeFirst();
          return row && toStoredBook(row);
        });
      }
      const query = this.db.updateTable('books').set(values).where('id', '=', id).returning(COLUMNS).compile();
      const row = (await this.write(query)).rows[0];
      return row && toStoredBook(row);
    } catch (error) {
      return classifyStoreError(error);
    }
  }

  async delete(id: bigint): Promise<boolean> {
    try {
      const query = bind(this.deleteById, [id]);
      const result = await this.write(query);
      return (result.numAffectedRows ?? 0n) > 0n;
    } catch (error) {
      return classifyStoreError(error);
    }
  }

  async ping(): Promise<void> {
    try {
      await sql`select 1`.execute(this.db);
    } catch (error) {
      classifyStoreError(error);
    }
  }

  async close(): Promise<void> {
    await this.db.destroy();
  }
}

/** PostgreSQL: a whole page in one row, its books' JSON already joined by the database. */
interface AggregatedPage {
  json: string;
  count: bigint | number;
  lastId: bigint | null;
}

/**
 * One page of the list. SQLite and PostgreSQL write each book's JSON themselves (in the
 * schema's key order, ids exact): no row objects, no serialization in JS. PostgreSQL even
 * joins the page into one text, so a page of 1,000 books is one value, not 1,000 row
 * objects (that garbage is what made listing 100,000 books grow the heap by 65 MiB).
 * MySQL normalizes JSON key order, so there the columns come back and bookJson() writes them.
 */
function compileSelectPage(db: Kysely<BookDatabase>, dialect: StoreDialect) {
  switch (dialect) {
    case 'sqlite':
      // Plucked: each row is the JSON text itself (building row objects costs half the query).
      return db
        .selectFrom('books')
        .select(sql<string>`json_object('id', id, 'title', title, 'author', author, 'year', year)`.as('json'))
        .where('id', '>', 0n)
        .orderBy('id', 'asc')
        .limit(1)
        .modifyEnd(sql.raw(PLUCK_MARKER))
        .compile();
    case 'postgres':
      return db
        .selectFrom(db.selectFrom('books').select(COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).as('b'))
        .select([
          sql<string>`coalesce(string_agg(row_to_json(b)::text, ',' order by b.id), '')`.as('json'),
          sql<bigint>`count(*)`.as('count'),
          sql<bigint | null>`max(b.id)`.as('lastId'),
        ])
        .compile();
    case 'mysql':
      return db.selectFrom('books').select(COLUMNS).where('id', '>', 0n).orderBy('id', 'asc').limit(1).compile();
  }
}

/** The id at the start of a book's JSON text as the stores write it: `{"id":123,…`. */
function idOfBookJson(json: string | undefined): bigint | undefined {
  const digits = json === undefined ? undefined : /^\{"id":(\d+)/.exec(json)?.[1];
  return digits === undefined ? undefined : BigInt(digits);
}

function toBigInt(value: bigint | string | number): bigint {
  return typeof value === 'bigint' ? value : BigInt(value);
}

function toStoredBook(row: BookRow): StoredBook {
  return {
    id: toBigInt(row.id),
    title: row.title,
    author: row.author,
    year: Number(row.year),
  };
}
