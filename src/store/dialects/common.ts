// Shared by the per-dialect modules: what opening a store needs and what it hands back.
import type { Dialect } from 'kysely';
import type { Logger } from 'pino';
import type { PoolStats } from '../book-store.js';
import type { SqliteExecutor } from './sqlite.js';

export interface DialectOptions {
  /** Bound on one query (and on waiting for a pooled connection) so an outage answers 503, not a hang. */
  queryTimeoutMs: number;
  poolMax: number | undefined;
  logger: Logger;
  /** Shown in messages instead of the URL, which may hold a password. */
  description: string;
}

export interface OpenedDialect {
  kyselyDialect: Dialect;
  poolStats: () => PoolStats | undefined;
  /** SQLite only: runs compiled queries synchronously on the same connection (see sqlite.ts). */
  sqlite?: SqliteExecutor;
}

export const DEFAULT_POOL_MAX = 10;

/** SQLite: a query ending in this comment returns plucked rows (one value per row, no objects). */
export const PLUCK_MARKER = '/* pluck */';
