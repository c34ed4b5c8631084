// The list on SQLite: text compared by code point (its default BINARY collation), and the
// search on an FTS5 table over the books' titles and authors (an external-content table: it
// holds only the index, kept by triggers in the same transaction as every write of a book).
// FTS5's unicode61 tokenizer splits words at anything that is not a letter or a digit and folds
// case, as the search's terms are made; diacritics are kept, as on the other databases.
import { sql, type SqlBool } from 'kysely';
import type { BookListSql } from '../book-query.js';

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

export const sqliteList: BookListSql = {
  textKey: (column) => sql.ref(column),
  // `"tolk"* "hob"*`: each term a prefix of a token, all of them (FTS5's implicit AND), in
  // either column. Terms are letters and digits only; the text is a bound parameter.
  matches: (terms) =>
    sql<SqlBool>`${sql.ref('books.id')} in (select rowid from ${sql.table(SEARCH_TABLE)} where ${sql.table(SEARCH_TABLE)} match ${terms.map((term) => `"${term}"*`).join(' ')})`,
  async createSearchIndex(db) {
    await sql`create virtual table if not exists ${sql.table(SEARCH_TABLE)} using fts5(
      title, author, content = 'books', content_rowid = 'id', tokenize = 'unicode61 remove_diacritics 0')`.execute(db);
    for (const [name, body] of Object.entries(TRIGGERS)) await sql`create trigger if not exists ${sql.raw(name)} ${body}`.execute(db);
    // Indexes the books there are (again, if an earlier attempt stopped halfway).
    await sql`insert into ${sql.table(SEARCH_TABLE)} (${sql.raw(SEARCH_TABLE)}) values ('rebuild')`.execute(db);
  },
  async dropSearchIndex(db) {
    for (const name of Object.keys(TRIGGERS)) await sql`drop trigger if exists ${sql.raw(name)}`.execute(db);
    await sql`drop table if exists ${sql.table(SEARCH_TABLE)}`.execute(db);
  },
};
