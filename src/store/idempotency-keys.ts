// Idempotency-Key, in the database: a key is claimed by the first request that brings it (a row
// committed at once, so every instance sees it is being processed), and its answer is stored in
// the same transaction as the write it reports (src/store/book-repository.ts). A repeat reads
// the stored answer, or that the key is still being processed, or that it was used for another
// request. The queries are compiled once, the same on every database but for how a duplicate
// insert is ignored, and run on whatever connection or transaction the caller gives.
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { bind, type BookDatabase, type RunQuery } from './books-table.js';

/** A key as a request brings it: the key, the request it names (a digest), and a fresh attempt id. */
export interface KeyedRequest {
  key: string;
  fingerprint: string;
  /** Random, one per attempt: only the attempt that claimed the key stores its answer. */
  owner: string;
}

/** An answer as it is stored and replayed, byte for byte. */
export interface StoredAnswer {
  status: number;
  etag: string | undefined;
  body: string;
}

export type KeyClaim =
  | { kind: 'claimed' }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'in-progress' }
  | { kind: 'other-request' };

/** How long keys live, and how long an attempt may hold a key before another may take it. */
export interface KeyLifetimes {
  /** IDEMPOTENCY_TTL: after this a key is forgotten (and purged). */
  ttlMs: number;
  /** An attempt that neither stored an answer nor let go of its key within this (its instance died) loses it. */
  abandonedAfterMs: number;
}

/** After this long without an answer stored, a claimed key is taken to be abandoned. */
export const ABANDONED_CLAIM_MS = 60_000;
/** Most expired keys one purge statement deletes: short statements, no noticeable pause. */
export const PURGE_BATCH = 1000;

/** How the database ignores an INSERT of a key that exists: ON CONFLICT DO NOTHING, or INSERT IGNORE (MySQL). */
export type IgnoreDuplicate = 'on-conflict' | 'insert-ignore';

export interface IdempotencyKeyQueries {
  /**
   * `run` for the writes, `read` for looking at a key that exists (on SQLite a read must not
   * start a write batch: a transaction that reads before it writes cannot wait for another
   * process's writer, it fails at once).
   */
  claim(run: RunQuery, read: RunQuery, request: KeyedRequest, lifetimes: KeyLifetimes): Promise<KeyClaim>;
  /** False when the attempt no longer holds the key (it was abandoned and taken over). */
  storeAnswer(run: RunQuery, request: KeyedRequest, answer: StoredAnswer): Promise<boolean>;
  /** The UPDATE storeAnswer runs, for a caller that runs it itself (SQLite's group commit, synchronously): it changed a row iff the key was still held. */
  storeAnswerQuery(request: KeyedRequest, answer: StoredAnswer): CompiledQuery;
  /** Lets go of a claim whose request wrote nothing, so the key can be used again at once. */
  release(run: RunQuery, request: KeyedRequest): Promise<void>;
  /** Deletes up to PURGE_BATCH expired keys; how many it deleted. */
  purge(run: RunQuery, ttlMs: number): Promise<number>;
}

interface KeyRow {
  fingerprint: string;
  owner: string;
  status: number | bigint | null;
  etag: string | null;
  body: string | null;
  created_ms: number | bigint | string;
  now_ms: number | bigint | string;
}

export function idempotencyKeyQueries(db: Kysely<BookDatabase>, nowMs: RawBuilder<number>, ignoreDuplicate: IgnoreDuplicate): IdempotencyKeyQueries {
  const keys = 'idempotency_keys' as const;
  const insertBuilder = db.insertInto(keys).values({ idempotency_key: '', fingerprint: '', owner: '', created_ms: nowMs });
  // Parameters: key, fingerprint, owner.
  const insert = (
    ignoreDuplicate === 'insert-ignore' ? insertBuilder.ignore() : insertBuilder.onConflict((conflict) => conflict.column('idempotency_key').doNothing())
  ).compile();
  const select = db
    .selectFrom(keys)
    .select(['fingerprint', 'owner', 'status', 'etag', 'body', 'created_ms', nowMs.as('now_ms')])
    .where('idempotency_key', '=', '')
    .compile();
  // Parameters: fingerprint, new owner, key, old owner.
  const takeOver = db
    .updateTable(keys)
    .set({ fingerprint: '', owner: '', status: sql<null>`null`, etag: sql<null>`null`, body: sql<null>`null`, created_ms: nowMs })
    .where('idempotency_key', '=', '')
    .where('owner', '=', '')
    .compile();
  // Parameters: status, etag, body, key, owner.
  const answer = db.updateTable(keys).set({ status: 0, etag: '', body: '' }).where('idempotency_key', '=', '').where('owner', '=', '').compile();
  const answerQuery = ({ key, owner }: KeyedRequest, stored: StoredAnswer) => bind(answer, [stored.status, stored.etag ?? null, stored.body, key, owner]);
  const release = db.deleteFrom(keys).where('idempotency_key', '=', '').where('owner', '=', '').where('status', 'is', null).compile();
  const expired = (ttlMs: number) => sql<boolean>`created_ms < ${nowMs} - ${ttlMs}`;
  const purge = (ttlMs: number) =>
    ignoreDuplicate === 'insert-ignore'
      ? // MySQL cannot LIMIT a subquery of IN, but can LIMIT a DELETE.
        db.deleteFrom(keys).where(expired(ttlMs)).limit(PURGE_BATCH).compile()
      : db
          .deleteFrom(keys)
          .where('idempotency_key', 'in', db.selectFrom(keys).select('idempotency_key').where(expired(ttlMs)).limit(PURGE_BATCH))
          .compile();

  return {
    async claim(run, read, { key, fingerprint, owner }, { ttlMs, abandonedAfterMs }) {
      // A row deleted or taken over between our statements makes us look again; a few times at most.
      for (let look = 0; look < 3; look++) {
        const inserted = await run(bind(insert, [key, fingerprint, owner]));
        if ((inserted.numAffectedRows ?? 0n) > 0n) return { kind: 'claimed' };
        const row = (await read(bind(select, [key]))).rows[0] as KeyRow | undefined;
        if (!row) continue;
        const age = Number(row.now_ms) - Number(row.created_ms);
        const answered = row.status !== null;
        if (age > ttlMs || (!answered && age > abandonedAfterMs)) {
          const taken = await run(bind(takeOver, [fingerprint, owner, key, row.owner]));
          if ((taken.numAffectedRows ?? 0n) > 0n) return { kind: 'claimed' };
          continue;
        }
        if (!answered) return { kind: 'in-progress' };
        if (row.fingerprint !== fingerprint) return { kind: 'other-request' };
        return { kind: 'replay', answer: { status: Number(row.status), etag: row.etag ?? undefined, body: row.body ?? '' } };
      }
      return { kind: 'in-progress' };
    },
    async storeAnswer(run, request, stored) {
      const { numAffectedRows } = await run(answerQuery(request, stored));
      return (numAffectedRows ?? 0n) > 0n;
    },
    storeAnswerQuery: answerQuery,
    async release(run, { key, owner }) {
      await run(bind(release, [key, owner]));
    },
    async purge(run, ttlMs) {
      const { numAffectedRows } = await run(purge(ttlMs));
      return Number(numAffectedRows ?? 0n);
    },
  };
}
