// MySQL / MariaDB through mysql2: bounded pool, exact big integers, utf8mb4, and connection
// errors that never crash the process.
import { createPool as createMysqlPool, type Pool } from 'mysql2';
import type { PoolStats } from '../book-store.js';
import { DEFAULT_POOL_MAX, type DriverOptions } from '../driver.js';

export function createPool(url: string, options: DriverOptions): Pool {
  const pool = createMysqlPool({
    uri: url,
    connectionLimit: options.poolMax ?? DEFAULT_POOL_MAX,
    connectTimeout: options.queryTimeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  // Every connection gets a lasting listener, so a dropped one cannot crash the process.
  pool.on('connection', (connection) => {
    connection.on('error', (error: unknown) => options.logger.warn({ err: error }, 'MySQL connection failed'));
  });
  return pool;
}

/** mysql2 exposes no counters; its queues are stable internals since 1.x. */
export function mysqlPoolStats(pool: Pool, options: DriverOptions): () => PoolStats {
  const internals = pool as unknown as Record<'_allConnections' | '_freeConnections' | '_connectionQueue', { length: number }>;
  const max = options.poolMax ?? DEFAULT_POOL_MAX;
  return () => ({
    total: internals._allConnections.length,
    idle: internals._freeConnections.length,
    waiting: internals._connectionQueue.length,
    max,
  });
}
