// The books table as Kysely sees it, the rows the drivers return, and how a row reads as a book.
import type { CompiledQuery, Generated, QueryResult } from 'kysely';
import type { BookFields, StoredBook } from '../books/book.js';

interface BooksTable extends BookFields {
  id: Generated<bigint>;
}

export interface BookDatabase {
  books: BooksTable;
}

/** What the drivers return: ids as bigint (SQLite, pg) or string/number (mysql2), years as number or bigint. */
export interface BookRow {
  id: bigint | string | number;
  title: string;
  author: string;
  year: number | bigint;
}

/** How a driver runs a compiled query: its reads, or its writes (resolved once durable). */
export type RunQuery = <R>(query: CompiledQuery<R>) => Promise<QueryResult<R>>;

/** A query compiled once at startup; each call only binds new parameters. */
export function bind<R>(query: CompiledQuery<R>, parameters: readonly unknown[]): CompiledQuery<R> {
  return { ...query, parameters };
}

export function toBigInt(value: bigint | string | number): bigint {
  return typeof value === 'bigint' ? value : BigInt(value);
}

export function toStoredBook(row: BookRow): StoredBook {
  return {
    id: toBigInt(row.id),
    title: row.title,
    author: row.author,
    year: Number(row.year),
  };
}
