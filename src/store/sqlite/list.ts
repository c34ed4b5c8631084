// The list on SQLite: text compared by code point (its default BINARY collation), and the
// search on an FTS5 table over the books' titles and authors (an external-content table: it
// holds only the index, kept by triggers in the same transaction as every write of a book).
// FTS5's unicode61 tokenizer splits words at anything that is not a letter or a digit and folds
// case, as the search's terms are made; diacritics are kept, as on the other databases.
import { CompiledQuery, sql, type SqlBool } from 'kysely';
import type { BookListSql } from '../book-query.js';
import { bind, type RunQuery } from '../books-table.js';

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

/** Prefixes up to this long are in the index itself (`prefix = '1 2 3'`). */
const INDEXED_PREFIX = 3;
/** A longer term that starts more words than this is left to FTS5's own prefix query. */
const MOST_WORDS_PER_TERM = 16;

/** The index's words, one row each (fts5vocab), made per connection as a temp table. */
const VOCABULARY = 'books_search_words';
const CREATE_VOCABULARY = CompiledQuery.raw(`create virtual table if not exists temp.${VOCABULARY} using fts5vocab(main, ${SEARCH_TABLE}, row)`);
const WORDS_STARTING = CompiledQuery.raw(
  `select term from temp.${VOCABULARY} where term >= ? and term < ? limit ${MOST_WORDS_PER_TERM + 1}`,
) as CompiledQuery<{ term: string }>;
const vocabularies = new WeakSet<RunQuery>();

/**
 * The MATCH text of the terms: each a prefix of a word in either column, all of them. A
 * prefix longer than the index's own is a query FTS5 answers by merging every matching word's
 * list of books in full before it returns one (7 ms for `winter` at 1,000,000 books), so such a
 * term is written as the words it starts, read from the index's vocabulary: FTS5 then walks
 * those lists in step and stops at LIMIT (0.2 ms). Only ASCII terms: FTS5 folds the case of
 * other letters its own way, and its prefix query is then the one that matches it.
 * Terms are letters and digits only, and the text is a bound parameter.
 */
async function matchText(terms: readonly string[], run: RunQuery): Promise<string> {
  const parts: string[] = [];
  for (const term of terms) {
    let words: string[] = [];
    if (term.length > INDEXED_PREFIX && /^[a-z0-9]+$/.test(term)) {
      if (!vocabularies.has(run)) {
        await run(CREATE_VOCABULARY);
        vocabularies.add(run);
      }
      // Every word that starts with the term sorts from the term up to the term followed by the
      // highest code point (the vocabulary compares UTF-8 bytes).
      words = (await run(bind(WORDS_STARTING, [term, `${term}\u{10FFFF}`]))).rows.map((row) => row.term);
    }
    parts.push(words.length === 0 || words.length > MOST_WORDS_PER_TERM ? `"${term}"*` : `(${words.map(quoted).join(' OR ')})`);
  }
  return parts.join(' AND ');
}

const quoted = (word: string) => `"${word.replaceAll('"', '""')}"`;

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
  async search(terms, run) {
    const text = await matchText(terms, run);
    return {
      condition: sql<SqlBool>`${sql.ref('books.id')} in (select rowid from ${sql.table(SEARCH_TABLE)} where ${sql.table(SEARCH_TABLE)} match ${text})`,
      // FTS5 walks its matches in rowid order and stops at LIMIT; the books table is not read.
      idsInOrder: ({ after, descending, limit }) =>
        sql<{ id: bigint }>`select rowid as id from ${sql.table(SEARCH_TABLE)} where ${sql.table(SEARCH_TABLE)} match ${text}${
          after === undefined ? sql`` : sql` and rowid ${sql.raw(descending ? '<' : '>')} ${after}`
        } order by rowid ${sql.raw(descending ? 'desc' : 'asc')} limit ${limit}`,
    };
  },
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
