// A page of the list in any order, searched or not (src/books/book-query.ts), the same query
// on every database: what differs is the database's search condition and how it compares text
// (its BookListSql). Keyset pagination: a page starts after the last book of the one before,
// by the sort's column and then by id, so each page is read from an index in O(page) whatever
// the collection's size, and writes between two pages do not shift them.
import { sql, type CompiledQuery, type Expression, type Kysely, type SelectQueryBuilder, type SqlBool } from 'kysely';
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
  /** How the database finds the books in which each term starts a word of the title or author (at least one term). */
  search(terms: readonly string[], run: RunQuery): Search | Promise<Search>;
  /** The database's own estimate of how many books there are (its statistics), if it keeps one. */
  estimateCount?(run: RunQuery): Promise<number | undefined>;
  /**
   * The database's estimate of how many rows `query` gives (its planner's, from statistics),
   * if it has one worth trusting: a search beyond SEARCH_COUNTED_UP_TO is then not counted.
   */
  plannedRows?(query: CompiledQuery, run: RunQuery): Promise<number | undefined>;
  /** Creates the search's text index over the books there are (and keeps it with every write from then on). */
  createSearchIndex(db: Kysely<unknown>): Promise<void>;
  dropSearchIndex(db: Kysely<unknown>): Promise<void>;
}

/** A search, as the database writes it. */
export interface Search {
  /** The condition that a book matches. */
  condition: Expression<SqlBool>;
  /**
   * Where the search index hands out its matches in id order (SQLite's FTS5), the ids of the
   * matches in a range, read from the index alone, so that LIMIT stops the work: a page by id
   * or the first matches counted cost the page, not every match.
   */
  idsInOrder?(range: { after?: bigint; descending: boolean; limit: number }): Expression<{ id: bigint }>;
  /**
   * Whether the database reads every match from the search index before the page is cut
   * (InnoDB's FULLTEXT): the page's statement then counts them too, exactly, for nothing.
   */
  readsEveryMatch?: boolean;
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

/**
 * A search whose matches the page's statement does not read anyway is counted up to this many
 * matches; beyond, counting them costs more than the page (46,760 matches of `w h` at
 * 1,000,000 books: 7 s on PostgreSQL, where the page takes 10 ms), so their number is estimated.
 */
export const SEARCH_COUNTED_UP_TO = 1_000;

/**
 * A search the database's planner expects to match up to this many books is read from the
 * search index first and then ordered. Left to itself, PostgreSQL walks the sort's index and
 * tests each book when it expects many matches, which finds a page of a dense search in a few
 * milliseconds but reads every book for a rare term it cannot estimate (`zzz` at 1,000,000
 * books: 3.4 s, where the search index answers in 0.3 ms).
 */
export const SEARCH_INDEX_FIRST_UP_TO = 20_000;

/** The books a page or a count reads: the table, or the books a search matches. */
type BooksSource = SelectQueryBuilder<BookDatabase, 'books', object>;

export function bookQueries(db: Kysely<BookDatabase>, dialect: BookListSql) {
  const sortKey = (field: SortField): Expression<unknown> =>
    field === 'title' || field === 'author' ? dialect.textKey(field) : sql.ref(field);

  /**
   * One page of the books the query asks for (of `source`: the search's books, if any), in its
   * order; `counted`: with how many books `source` holds, counted by the same statement.
   */
  async function selectPage(run: RunQuery, { sort, after, limit }: BookQuery, source: BooksSource = db.selectFrom('books'), counted = false): Promise<FoundBooks> {
    const direction = sort.descending ? 'desc' : 'asc';
    const beyond = sort.descending ? '<' : '>';
    const key = sortKey(sort.field);
    let query = source.select(BOOK_COLUMNS);
    if (counted) query = query.select(sql<number | bigint | string>`count(*) over ()`.as('total'));
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
  }

  /** Every book: counted when few, otherwise the database's estimate where it keeps one. */
  async function countAll(run: RunQuery): Promise<BookCount> {
    if (dialect.estimateCount) {
      const estimate = await dialect.estimateCount(run);
      if (estimate !== undefined && estimate > COUNTED_UP_TO) return { count: estimate, exact: false };
    }
    const { rows } = await run(db.selectFrom('books').select((eb) => eb.fn.countAll().as('count')).compile());
    return { count: Number(rows[0]!.count), exact: true };
  }

  /**
   * The books a search finds, where the page's statement does not count them: counted up to
   * SEARCH_COUNTED_UP_TO (found in id order, so the work stops there); beyond, estimated from
   * how far into the ids the first matches reach (1,001 matches among the first tenth of the
   * ids make about 10,010: matches are taken to spread as the ids do). When the database's
   * planner expects more than SEARCH_INDEX_FIRST_UP_TO matches (`planned`), its estimate is the
   * answer.
   */
  async function countMatches(run: RunQuery, search: Search, planned: number | undefined): Promise<BookCount> {
    if (planned !== undefined && planned > SEARCH_INDEX_FIRST_UP_TO) return { count: Math.round(planned), exact: false };
    const first = { descending: false, limit: SEARCH_COUNTED_UP_TO + 1 };
    const firstIds = search.idsInOrder?.(first) ?? searchedBooks(search, false).select('id').orderBy('id').limit(first.limit);
    const counted = sql<{ count: number | bigint | string; last: number | bigint | string | null }>`select count(*) as count, max(id) as last from (${firstIds}) as first_matches`;
    const { count, last } = (await run(counted.compile(db))).rows[0]!;
    if (Number(count) <= SEARCH_COUNTED_UP_TO) return { count: Number(count), exact: true };
    const { highest } = (await run(db.selectFrom('books').select((eb) => eb.fn.max('id').as('highest')).compile())).rows[0]!;
    return { count: Math.round((Number(count) * Number(highest)) / Number(last)), exact: false };
  }

  /**
   * The books a search matches: where the planner expects few, read from the search index
   * first (SEARCH_INDEX_FIRST_UP_TO).
   */
  function searchedBooks(search: Search, indexFirst: boolean): BooksSource {
    if (indexFirst) {
      // The matches as a table of their own, named books (the same columns): OFFSET keeps the
      // planner from merging it into the page's query, so it cannot walk an index instead.
      const indexFirst = db.selectFrom('books').selectAll().where(search.condition).offset(0).as('books');
      return db.selectFrom(indexFirst) as unknown as BooksSource;
    }
    return db.selectFrom('books').where(search.condition);
  }

  return {
    /** One page of the books the query asks for, in its order, and (`counted`) how many match. */
    async selectBooks(run: RunQuery, query: BookQuery): Promise<FoundBooks> {
      if (query.terms.length === 0) {
        if (!query.counted) return selectPage(run, query);
        const [{ books }, total] = await Promise.all([selectPage(run, query), countAll(run)]);
        return { books, total };
      }
      const search = await dialect.search(query.terms, run);
      const planned = await dialect.plannedRows?.(db.selectFrom('books').where(search.condition).select(sql.lit(1).as('one')).compile(), run);
      const indexFirst = planned !== undefined && planned <= SEARCH_INDEX_FIRST_UP_TO;
      // Where the search index hands out matches in id order, a page by id takes just its ids from it.
      const { sort, after, limit } = query;
      const ids = sort.field === 'id' ? search.idsInOrder?.({ after: after?.id, descending: sort.descending, limit }) : undefined;
      const matching = ids ? db.selectFrom('books').where(sql<SqlBool>`${sql.ref('id')} in (${ids})`) : searchedBooks(search, indexFirst);
      if (!query.counted) return selectPage(run, query, matching);
      // Every match is read before the page is cut anyway: the same statement counts them.
      if (!ids && (indexFirst || search.readsEveryMatch)) return selectPage(run, query, matching, true);
      const [{ books }, total] = await Promise.all([selectPage(run, query, matching), countMatches(run, search, planned)]);
      return { books, total };
    },
  };
}
