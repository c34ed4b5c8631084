// The BookStore interface: what the HTTP layer needs from persistence, nothing more.
//
// src/store/ layout:
//   book-store.ts       this interface (the HTTP side's only view of the store)
//   errors.ts           StoreUnavailableError (503) and the error kinds the databases classify
//   open-store.ts       openStore(): settings → driver → reachable → migrated → the layers below
//                       (the composition root hands it tracing's driver wrapper and the speed paths' layers)
//   store-url.ts        DB_URL → StoreConfig; the database module of each kind, loaded on demand
//   nodes.ts            the hosts a DB_URL lists, and which one is in use (failover)
//   migration-lease.ts  one migrator at a time across every instance and node
//   retry.ts            every retry of the store as data (which errors, how many, what pause)
//   driver.ts           BookStoreDriver: the one interface every database module implements
//   book-repository.ts  the book operations over a BookStoreDriver, never asking which database
//   retrying-book-store.ts  around it: conflicts retried; what becomes a 503
//   key-purge.ts        around that: expired keys deleted in the background, a small batch at a time
//   book-store-layer.ts the base of the layers: what a layer does not change goes on
//   idempotency-keys.ts Idempotency-Key in the database: claims, stored answers, the purge
//   books-table.ts      the tables' Kysely types, their rows, and how a row reads as a book
//   by-id.ts            a book read, updated or deleted by id (with its version), the same on every database
//   returning.ts        INSERT/UPDATE … RETURNING, for the databases that have it
//   book-query.ts       a page of the list in any order, searched or not (keyset), over each database's BookListSql
//   migrations/         versioned DDL; the id column and table options come from the driver
//   sqlite/ postgres/ mysql/
//                       one folder per database, everything that differs: how DB_URL names it
//                       (<kind>-config.ts, light: no driver import), connection or pool
//                       and its stats, DDL, how queries run (SQLite: synchronous, cached
//                       statements, its writer; PostgreSQL: named prepared statements), the
//                       insert, update and list-page strategies, and errors.ts (its classifier)

import type { BookFields, VersionedBook } from '../books/book.js';
import type { BookQuery } from '../books/book-query.js';
import type { BookCount, FoundBooks } from './book-query.js';
import type { BookChangesTable } from './books-table.js';
import type { KeyClaim, KeyedRequest, StoredAnswer } from './idempotency-keys.js';

export type { BookCount, FoundBooks, KeyClaim, KeyedRequest, StoredAnswer };

/** An update's outcome: the book as written, no such book, or (with `ifVersion`) the book is at another version. */
export type UpdateOutcome = VersionedBook | 'missing' | 'changed';
/** A delete's outcome. */
export type DeleteOutcome = 'deleted' | 'missing' | 'changed';

/**
 * A write that brings a claimed Idempotency-Key: the answer `answer` makes of the write's
 * outcome is stored with the key in the write's own transaction; an outcome it makes no answer
 * of (nothing was written) lets go of the key in that transaction instead.
 */
export interface KeyedWrite<Outcome> {
  request: KeyedRequest;
  answer(outcome: Outcome): StoredAnswer | undefined;
}

export interface WriteOptions<Outcome> {
  /** If-Match: only while the book is at one of these versions (checked in the write's statement). */
  ifVersion?: readonly number[];
  idempotency?: KeyedWrite<Outcome>;
}

/** The attempt that claimed a key lost it (it took longer than ABANDONED_CLAIM_MS): nothing was written. */
export class KeyTakenOverError extends Error {
  override name = 'KeyTakenOverError';
}

export interface BookPage {
  /** The page's books as JSON object texts joined by commas (`{…},{…}`); '' for none. */
  json: string;
  /** How many books the page holds. */
  count: number;
  /** Id of the last book of the page, where the next page starts. */
  lastId: bigint | undefined;
}

/** A piece of BookStore.streamListJson: books, each after a comma, and the last one's id. */
export interface ListJsonPiece {
  bytes: Buffer;
  lastId: bigint;
}

/** One operation of a batch (POST /batch), as the store applies it. */
export type BatchOperation =
  | { kind: 'create'; fields: BookFields }
  | { kind: 'update'; id: bigint; changes: Partial<BookFields>; ifVersion: readonly number[] | undefined }
  | { kind: 'delete'; id: bigint; ifVersion: readonly number[] | undefined };

/** What one operation of an applied batch did. */
export type BatchResult = { kind: 'created' | 'updated'; book: VersionedBook } | { kind: 'deleted' };

/** A batch's outcome: every operation's, in order, or the first that failed (nothing written). */
export type BatchOutcome =
  | { kind: 'applied'; results: BatchResult[] }
  | { kind: 'failed'; operation: number; outcome: 'missing' | 'changed' };

/** A change of a book as the change feed hands it out (src/store/change-log.ts). */
export interface BookChange {
  position: bigint;
  kind: BookChangesTable['kind'];
  /** The book after the write; for a delete, its id and the version it had (no fields). */
  book: VersionedBook | { id: bigint; version: number };
}

/** Where the feed stands. */
export interface ChangeFeedState {
  /** Random, this database's: a cursor made for another one is not this feed's. */
  feedId: string;
  /** The position of the last change; every change committed before it was read has one. */
  last: bigint;
  /** Changes up to this position may be deleted (older than CHANGES_RETENTION). */
  prunedThrough: bigint;
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
  create(fields: BookFields, idempotency?: KeyedWrite<VersionedBook>): Promise<VersionedBook>;
  /**
   * Up to `limit` books with an id above `afterId`, ordered by id ascending (keyset paging),
   * each already written as its JSON object `{"id":…,"title":…,"author":…,"year":…}` with
   * the exact id. The store writes the JSON (SQLite, PostgreSQL) so no row objects are built.
   */
  listPageJson(afterId: bigint, limit: number): Promise<BookPage>;
  /**
   * Optional, a speed path's (bulk-lists): every book with an id above `afterId`, id ascending,
   * as JSON bytes in pieces, each book `,{…}` (after a comma: they follow the list's first
   * page); what listPageJson's pages would hold, read in far fewer statements. Each piece knows
   * its last book's id, where a reader that stops following it goes on with listPageJson.
   */
  readonly streamListJson?: (afterId: bigint) => AsyncIterable<ListJsonPiece>;
  /**
   * One page of the list in the query's order, searched or not (keyset paging:
   * src/store/book-query.ts), and, when the query asks, how many books match: counted, or the
   * database's estimate for a large collection without search terms.
   */
  findBooks(query: BookQuery): Promise<FoundBooks>;
  get(id: bigint): Promise<VersionedBook | undefined>;
  /**
   * Applies every operation in one transaction, in order, or none: the first operation that
   * finds no book or another version (If-Match) fails the batch and nothing is written.
   */
  applyBatch(operations: readonly BatchOperation[], idempotency?: KeyedWrite<BatchOutcome>): Promise<BatchOutcome>;
  /** Applies the given fields (none: reads the book). */
  update(id: bigint, changes: Partial<BookFields>, options?: WriteOptions<UpdateOutcome>): Promise<UpdateOutcome>;
  delete(id: bigint, options?: WriteOptions<DeleteOutcome>): Promise<DeleteOutcome>;
  /**
   * Claims an Idempotency-Key for a request (committed at once: every instance sees it), or
   * says why not: the answer stored for it, still being processed, or used for another request.
   */
  claimKey(request: KeyedRequest): Promise<KeyClaim>;
  /** Lets go of a claimed key whose write failed (rolled back), so the request can be sent again. */
  releaseKey(request: KeyedRequest): Promise<void>;
  /** Deletes up to a batch of expired keys; how many. */
  purgeExpiredKeys(): Promise<number>;
  /** Where the change feed stands, once every change committed so far has its position (src/store/change-log.ts). */
  changeFeedState(): Promise<ChangeFeedState>;
  /** Up to `limit` changes after `position`, in position (commit) order. */
  changesAfter(position: bigint, limit: number): Promise<BookChange[]>;
  /** Deletes up to a batch of the oldest changes written more than `retentionMs` ago; how many. */
  pruneChanges(retentionMs: number): Promise<number>;
  poolStats(): PoolStats | undefined;
  /** Undefined for a store that is a file (SQLite). */
  nodeUse(): NodeUse | undefined;
  /** Resolves when the store answers a trivial query and (SQLite) a write can commit. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
