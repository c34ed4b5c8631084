// The BookStore interface: what the HTTP layer needs from persistence, nothing more.
//
// src/store/ layout:
//   book-store.ts       this interface (the HTTP side's only view of the store)
//   errors.ts           StoreUnavailableError (503) and the error kinds the databases classify
//   open-store.ts       openStore(): settings → driver → reachable → migrated → the layers below
//   store-url.ts        DB_URL → StoreConfig; the database module of each kind, loaded on demand
//   nodes.ts            the hosts a DB_URL lists, and which one is in use (failover)
//   migration-lease.ts  one migrator at a time across every instance and node
//   retry.ts            every retry of the store as data (which errors, how many, what pause)
//   driver.ts           BookStoreDriver: the one interface every database module implements
//   book-repository.ts  the book operations over a BookStoreDriver, never asking which database
//   batched-book-store.ts   around it: requests that arrive together share queries (DataLoader)
//   retrying-book-store.ts  around that: conflicts retried; what becomes a 503
//   book-store-layer.ts the base of those two layers: what a layer does not change goes on
//   books-table.ts      the table's Kysely types, its rows, and how a row reads as a book
//   by-id.ts            a book read or deleted by id, the same on every database
//   returning.ts        INSERT/UPDATE … RETURNING, for the databases that have it
//   migrations/         versioned DDL; the id column and table options come from the driver
//   sqlite/ postgres/ mysql/
//                       one folder per database, everything that differs: how DB_URL names it
//                       (<kind>-config.ts, light: no driver import), connection or pool
//                       and its stats, DDL, how queries run (SQLite: synchronous, cached
//                       statements, group commit; PostgreSQL: named prepared statements), the
//                       insert, update and list-page strategies, and errors.ts (its classifier)

import type { BookFields, StoredBook } from '../books/book.js';

export interface BookPage {
  /** The page's books as JSON object texts joined by commas (`{…},{…}`); '' for none. */
  json: string;
  /** How many books the page holds. */
  count: number;
  /** Id of the last book of the page, where the next page starts. */
  lastId: bigint | undefined;
}

/** Connection pool usage, for metrics. SQLite has one connection: total = max = 1. */
export interface PoolStats {
  /** Connections open. */
  total: number;
  /** Open but not in use. */
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
  max: number;
}

/** The database hosts DB_URL lists (`host:port`) and the one the service works on now. */
export interface NodeUse {
  nodes: readonly string[];
  inUse: string;
}

export interface BookStore {
  create(fields: BookFields): Promise<StoredBook>;
  /**
   * Up to `limit` books with an id above `afterId`, ordered by id ascending (keyset paging),
   * each already written as its JSON object `{"id":…,"title":…,"author":…,"year":…}` with
   * the exact id. The store writes the JSON (SQLite, PostgreSQL) so no row objects are built.
   */
  listPageJson(afterId: bigint, limit: number): Promise<BookPage>;
  get(id: bigint): Promise<StoredBook | undefined>;
  /** Applies the given fields; undefined when no such book exists. */
  update(id: bigint, changes: Partial<BookFields>): Promise<StoredBook | undefined>;
  /** False when no such book exists. */
  delete(id: bigint): Promise<boolean>;
  poolStats(): PoolStats | undefined;
  /** Undefined for a store that is a file (SQLite). */
  nodeUse(): NodeUse | undefined;
  /** Resolves when the store answers a trivial query. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
