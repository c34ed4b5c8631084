// A page of the list in any order, searched or not (src/books/book-query.ts), the same query
// on every database: what differs is the database's search condition and how it compares text
// (its BookListSql). Keyset pagination: a page starts after the last book of the one before,
// by the sort's column and then by id, so each page is read from an index in O(page) whatever
// the collection's size, and writes between two pages do not shift them.
import { sql, type Expression, type Kysely, type SqlBool } from 'kysely';
import { BOOK_COLUMNS, type StoredBook } from '../books/book.js';
import type { BookQuery, SortField } from '../books/book-query.js';
import { toStoredBook, type BookDatabase, type BookRow, type RunQuery } from './books-table.js';

/**
 * What a database says about the list (one per src/store/<kind>/list.ts): how it compares text,
 * how it searches, and the indexes that make both fast (migration 004 creates them).
 */
export interface BookListSql {
  /**
   * The expression a text column is sorted by, in the queries and in the sort indexes alike:
   * every database compares by code point, so the order is the same on each.
   */
  textKey(column: 'title' | 'author'): Expression<string>;
  /**
   * How "after (value, id) in the order" is written so that the database reads it as one range
   * of the (key, id) index: a row comparison `(key, id) > (value, id)` (PostgreSQL, SQLite), or
   * `key > value or (key = value and id > id)` (MySQL, which reads a row comparison as a scan).
   */
  keyset: 'row-comparison' | 'or';
  /** The condition that each term starts a word of the book's title or author (at least one term). */
  matches(terms: readonly string[], run: RunQuery): Expression<SqlBool> | Promise<Expression<SqlBool>>;
  /** The database's own estimate of how many books there are (its statistics), if it keeps one. */
  estimateCount?(run: RunQuery): Promise<number | undefined>;
  /** Creates the search's text index over the books there are (and keeps it with every write from then on). */
  createSearchIndex(db: Kysely<unknown>): Promise<void>;
  dropSearchIndex(db: Kysely<unknown>): Promise<void>;
}

/** How many books match: counted, or the database's estimate. */
export interface BookCount {
  count: number;
  exact: boolean;
}

/** A page of books, and how many match when asked (BookQuery.counted). */
export interface FoundBooks {
  books: StoredBook[];
  total?: BookCount;
}

/** Up to this many books, an estimate is not worth it: they are counted. */
export const COUNTED_UP_TO = 10_000;

export function bookQueries(db: Kysely<BookDatabase>, dialect: BookListSql) {
  const sortKey = (field: SortField): Expression<unknown> =>
    field === 'title' || field === 'author' ? dialect.textKey(field) : sql.ref(field);

  return {
    /**
     * One page of the books the query asks for, in its order, and (`counted`) how many match:
     * with search terms, counted by the same statement (the search finds every match anyway);
     * without, by countBooks beside it.
     */
    async selectBooks(run: RunQuery, { sort, terms, after, limit, counted }: BookQuery): Promise<FoundBooks> {
      if (counted && terms.length === 0) {
        const [{ books }, total] = await Promise.all([this.selectBooks(run, { sort, terms, after, limit }), this.countBooks(run, terms)]);
        return { books, total };
      }
      const direction = sort.descending ? 'desc' : 'asc';
      const beyond = sort.descending ? '<' : '>';
      const key = sortKey(sort.field);
      let query = db.selectFrom('books').select(BOOK_COLUMNS);
      if (counted) query = query.select(sql<number | bigint | string>`count(*) over ()`.as('total'));
      if (terms.length > 0) query = query.where(await dialect.matches(terms, run));
      if (after && sort.field === 'id') query = query.where('id', beyond, after.id);
      else if (after) {
        const { value, id } = after;
        query = query.where((eb) =>
          dialect.keyset === 'row-comparison'
            ? sql<SqlBool>`(${key}, ${sql.ref('id')}) ${sql.raw(beyond)} (${value}, ${id})`
            : eb.or([eb(key, beyond, value), eb.and([eb(key, '=', value), eb('id', beyond, id)])]),
        );
      }
      query = query.orderBy(key, direction);
      if (sort.field !== 'id') query = query.orderBy('id', direction);
      const rows = (await run(query.limit(limit).compile())).rows as Array<BookRow & { total?: number | bigint | string }>;
      const books = rows.map(toStoredBook);
      return counted ? { books, total: { count: Number(rows[0]?.total ?? 0), exact: true } } : { books };
    },

    /**
     * How many books match the terms: counted when there are terms (the search's index bounds
     * the work) or few books; otherwise the database's estimate, where it keeps one.
     */
    async countBooks(run: RunQuery, terms: readonly string[]): Promise<BookCount> {
      if (terms.length === 0 && dialect.estimateCount) {
        const estimate = await dialect.estimateCount(run);
        if (estimate !== undefined && estimate > COUNTED_UP_TO) return { count: estimate, exact: false };
      }
      let query = db.selectFrom('books').select((eb) => eb.fn.countAll().as('count'));
      if (terms.length > 0) query = query.where(await dialect.matches(terms, run));
      const { rows } = await run(query.compile());
      return { count: Number((rows[0] as { count: number | bigint | string }).count), exact: true };
    },
  };
}
