// The list on SQLite: text compared by code point (its default BINARY collation), and the
// search on an FTS5 table over the books' titles and authors (an external-content table: it
// holds only the index, kept by triggers in the same transaction as every write of a book).
// FTS5's unicode61 tokenizer splits words at anything that is not a letter or a digit and folds
// case, as the search's terms are made; diacritics are kept, as on the other databases.
import { CompiledQuery, sql, type SqlBool } from 'kysely';
import type { BookListSql } from '../book-query.js';
import type { RunQuery } from '../books-table.js';

const COUNT_BOOKS = CompiledQuery.raw('select count(*) as count from books') as CompiledQuery<{ count: number | bigint }>;

const SEARCH_TABLE = 'books_search';

const TRIGGERS = {
  books_search_insert: sql`after insert on books begin
    insert into books_search (rowid, title, author) values (new.id, new.title, new.author);
  end`,
  books_search_delete: sql`after delete on books begin
    insert into books_search (books_search, rowid, title, author) values ('delete', old.id, old.title, old.author);
  end`,
  books_search_update: sql`after update of title, author on books begin
    insert into books_search (books_search, rowid, title, author) values ('delete', old.id, old.title, old.author);
    insert into books_search (rowid, title, author) values (new.id, new.title, new.author);
  end`,
};

/** How long a count of every book stands in for the count (X-Total-Count-Estimate). */
const COUNT_KEPT_MS = 10_000;
const counts = new WeakMap<RunQuery, { count: number; at: number }>();

export const sqliteList: BookListSql = {
  textKey: (column) => sql.ref(column),
  keyset: 'row-comparison',
  // SQLite keeps no row count: counting a million books reads every page of an index (9 to 42
  // ms, during which the one connection answers nothing else). The last count, taken at most
  // 10 s ago, is the estimate; BookQueries counts anew when it says the collection is small.
  async estimateCount(run) {
    const kept = counts.get(run);
    if (kept && Date.now() - kept.at < COUNT_KEPT_MS) return kept.count;
    const { rows } = await run(COUNT_BOOKS);
    const count = Number(rows[0]?.count ?? 0);
    counts.set(run, { count, at: Date.now() });
    return count;
  },
  // `"tolk"* "hob"*`: each term a prefix of a token, all of them (FTS5's implicit AND), in
  // either column. Terms are letters and digits only; the text is a bound parameter.
  matches: (terms) =>
    sql<SqlBool>`${sql.ref('books.id')} in (select rowid from ${sql.table(SEARCH_TABLE)} where ${sql.table(SEARCH_TABLE)} match ${terms.map((term) => `"${term}"*`).join(' ')})`,
  async createSearchIndex(db) {
    // detail = none: the index keeps which books hold each word, not where (the search needs no
    // phrases), a third of the size. prefix: the words' first 1, 2 and 3 letters indexed too, so
    // a short term (`t`, as the page's filter sends after one key) is one index entry, not
    // thousands of words merged.
    await sql`create virtual table if not exists ${sql.table(SEARCH_TABLE)} using fts5(
      title, author, content = 'books', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 0',
      detail = none, prefix = '1 2 3')`.execute(db);
    for (const [name, body] of Object.entries(TRIGGERS)) await sql`create trigger if not exists ${sql.raw(name)} ${body}`.execute(db);
    // Indexes the books there are (again, if an earlier attempt stopped halfway).
    await sql`insert into ${sql.table(SEARCH_TABLE)} (${sql.raw(SEARCH_TABLE)}) values ('rebuild')`.execute(db);
  },
  async dropSearchIndex(db) {
    for (const name of Object.keys(TRIGGERS)) await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
    await sql`drop table if exists ${sql.table(SEARCH_TABLE)}`.execute(db);
  },
};
