// The list on MySQL and MariaDB: text compared by code point (the table's utf8mb4_bin
// collation), and the search on an InnoDB FULLTEXT index. The index is over a stored column
// the database computes from each book, `search_words`: its title and author lower-cased, with
// everything that is not a letter or a digit turned into a space, so that the index's words
// are the search's words (InnoDB's own parser keeps `o'brien` and `foo_bar` whole). Diacritics
// are kept.
//
// The index leaves out words shorter than innodb_ft_min_token_size (3 by default) and its
// stopwords; a term that could be such a word, or the start of one, is checked with LIKE on
// `search_words` instead (exact, but over every row the index terms leave: a search made only
// of such terms reads the whole table).
import { CompiledQuery, sql, type Kysely, type SqlBool } from 'kysely';
import type { BookListSql } from '../book-query.js';
import type { RunQuery } from '../books-table.js';

const SEARCH_COLUMN = 'search_words';
const SEARCH_INDEX = 'books_search';

/** InnoDB's default stopwords (information_schema.innodb_ft_default_stopword) of 3 letters or more. */
const STOPWORDS = ['about', 'are', 'com', 'for', 'from', 'how', 'that', 'the', 'this', 'was', 'what', 'when', 'where', 'who', 'will', 'with', 'und', 'www'];

/** Whether an index exists: MySQL has no CREATE INDEX IF NOT EXISTS. */
export async function indexExists(db: Kysely<unknown>, table: string, index: string): Promise<boolean> {
  const { rows } = await sql<{ found: number }>`select count(*) as found from information_schema.statistics
    where table_schema = database() and table_name = ${table} and index_name = ${index}`.execute(db);
  return Number(rows[0]?.found ?? 0) > 0;
}

/** innodb_ft_min_token_size, asked once per pool. */
const minTokenSizes = new WeakMap<RunQuery, Promise<number>>();

function minTokenSize(run: RunQuery): Promise<number> {
  let size = minTokenSizes.get(run);
  if (!size) {
    size = run(CompiledQuery.raw('select @@innodb_ft_min_token_size as size') as CompiledQuery<{ size: number | string }>).then(({ rows }) => Number(rows[0]?.size ?? 3));
    size.catch(() => minTokenSizes.delete(run));
    minTokenSizes.set(run, size);
  }
  return size;
}

export const mysqlList: BookListSql = {
  textKey: (column) => sql.ref(column),
  keyset: 'or',
  async search(terms, run) {
    const indexedFrom = await minTokenSize(run);
    const indexed = terms.filter((term) => term.length >= indexedFrom && !STOPWORDS.some((word) => word.startsWith(term)));
    const scanned = terms.filter((term) => !indexed.includes(term));
    // Terms are letters and digits only (no LIKE wildcards, no boolean-mode operators); both texts are bound parameters.
    const conditions = scanned.map((term) => sql<SqlBool>`concat(' ', ${sql.ref(SEARCH_COLUMN)}) like ${`% ${term}%`}`);
    if (indexed.length > 0) {
      conditions.unshift(sql<SqlBool>`match (${sql.ref(SEARCH_COLUMN)}) against (${indexed.map((term) => `+${term}*`).join(' ')} in boolean mode)`);
    }
    // FULLTEXT hands out every match, unordered, before the page is sorted and cut.
    return { condition: sql<SqlBool>`(${sql.join(conditions, sql` and `)})`, readsEveryMatch: indexed.length > 0 };
  },
  // InnoDB's estimate of the table's rows (from sampled pages; off by tens of percent).
  async estimateCount(run) {
    const { rows } = await run(
      CompiledQuery.raw("select table_rows as estimate from information_schema.tables where table_schema = database() and table_name = 'books'") as CompiledQuery<{ estimate: number | string | null }>,
    );
    const estimate = rows[0]?.estimate;
    return estimate === null || estimate === undefined ? undefined : Number(estimate);
  },
  async createSearchIndex(migrating) {
    // Each step at most once: MySQL has no transactional DDL, and an attempt that stopped halfway is run again.
    const books = (await migrating.introspection.getTables()).find((table) => table.name === 'books');
    if (!books?.columns.some((column) => column.name === SEARCH_COLUMN)) {
      await sql`alter table books add column ${sql.ref(SEARCH_COLUMN)} text
        generated always as (lower(regexp_replace(concat(title, ' ', author), '[^[:alnum:]]+', ' '))) stored`.execute(migrating);
    }
    if (!(await indexExists(migrating, 'books', SEARCH_INDEX))) {
      await sql`create fulltext index ${sql.ref(SEARCH_INDEX)} on books (${sql.ref(SEARCH_COLUMN)})`.execute(migrating);
    }
  },
  async dropSearchIndex(migrating) {
    await sql`alter table books drop column ${sql.ref(SEARCH_COLUMN)}`.execute(migrating);
  },
};
