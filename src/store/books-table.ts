// The tables as Kysely sees them, the rows the drivers return, and how a row reads as a book.
import type { CompiledQuery, Generated, QueryResult } from 'kysely';
import { BOOK_COLUMNS, type BookFields, type VersionedBook } from '../books/book.js';

interface BooksTable extends BookFields {
  id: Generated<bigint>;
  /** 1 when created, one more on every write of the book (its ETag: src/http/conditional-requests.ts). */
  version: Generated<number>;
}

/** One Idempotency-Key: who is processing it, or the answer its first request got (src/store/idempotency-keys.ts). */
export interface IdempotencyKeysTable {
  idempotency_key: string;
  /** SHA-256 of the request's method, URL and body: a repeat must be the same request. */
  fingerprint: string;
  /** A random id of the attempt processing the key; the answer is stored only by that attempt. */
  owner: string;
  /** The stored answer's status; null while the first request is being processed. */
  status: number | null;
  etag: string | null;
  body: string | null;
  /** When the key was claimed, in milliseconds by the database's clock. */
  created_ms: number | bigint;
}

/**
 * One change of a book, as the database's triggers write it in the write's transaction
 * (src/store/change-log.ts): PostgreSQL and MySQL write it here, without a position, and the
 * sequencer moves it to book_feed; SQLite writes it to book_feed at once.
 */
export interface BookChangesTable {
  /** Generated in insert order (not commit order). */
  id: Generated<bigint>;
  book_id: bigint;
  kind: 'created' | 'updated' | 'deleted';
  /** The book's version after the write (for a delete: the version it had). */
  version: number;
  /** The book's fields after the write; null for a delete. */
  title: string | null;
  author: string | null;
  year: number | null;
  /** When the write happened, in milliseconds by the database's clock (for CHANGES_RETENTION). */
  at_ms: number | bigint;
}

/** The changes in commit order, each at its position in the feed: what GET /books/changes reads. */
export interface BookFeedTable extends Omit<BookChangesTable, 'id'> {
  position: bigint;
}

/** The feed's one row: its id, the last position the sequencer gave out, and up to where changes were pruned. */
export interface BookChangeFeedTable {
  /** Random, made when the table is: a cursor of another database is told apart. */
  feed_id: string;
  /** The sequencer's (SQLite's last position is the largest in book_feed). */
  last_position: bigint;
  pruned_through: bigint;
}

export interface BookDatabase {
  books: BooksTable;
  idempotency_keys: IdempotencyKeysTable;
  book_changes: BookChangesTable;
  book_feed: BookFeedTable;
  book_change_feed: BookChangeFeedTable;
}

/** Every column a book is read with: its JSON fields, then its version. */
export const VERSIONED_BOOK_COLUMNS = [...BOOK_COLUMNS, 'version'] as const;

/** What the drivers return: ids as bigint (SQLite, pg) or string/number (mysql2), years as number or bigint. */
export interface BookRow {
  id: bigint | string | number;
  title: string;
  author: string;
  year: number | bigint;
}

export interface VersionedBookRow extends BookRow {
  version: number | bigint | string;
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

export function toVersionedBook(row: VersionedBookRow): VersionedBook {
  return {
    id: toBigInt(row.id),
    title: row.title,
    author: row.author,
    year: Number(row.year),
    version: Number(row.version),
  };
}

/** A list row as a book (lists carry no versions). */
export function toStoredBook(row: BookRow) {
  return { id: toBigInt(row.id), title: row.title, author: row.author, year: Number(row.year) };
}
