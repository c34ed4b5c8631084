// MySQL / MariaDB through mysql2: bounded pool, exact big integers, utf8mb4, and connection
// errors that never crash the process.
import { MysqlDialect } from 'kysely';
import { createPool as createMysqlPool } from 'mysql2';
import { DEFAULT_POOL_MAX, type DialectOptions, type OpenedDialect } from './common.js';

export function openMysqlDialect(url: string, options: DialectOptions): OpenedDialect {
  const pool = createMysqlPoolFor(url, options);
  const max = options.poolMax ?? DEFAULT_POOL_MAX;
  // mysql2 exposes no counters; its queues are stable internals since 1.x.
  const internals = pool as unknown as Record<'_allConnections' | '_freeConnections' | '_connectionQueue', { length: number }>;
  return {
    kyselyDialect: new MysqlDialect({ pool }),
    poolStats: () => ({
      total: internals._allConnections.length,
      idle: internals._freeConnections.length,
      waiting: internals._connectionQueue.length,
      max,
    }),
  };
}

function createMysqlPoolFor(url: string, options: DialectOptions) {
  const pool = createMysqlPool({
    uri: url,
    connectionLimit: options.poolMax ?? DEFAULT_POOL_MAX,
    connectTimeout: options.queryTimeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  // Same for MySQL: every connection gets a lasting listener, so a dropped one cannot crash us.
  pool.on('connection', (connection) => {
    connection.on('error', (error: unknown) => options.logger.warn({ err: error }, 'MySQL connection failed'));
  });
  return pool;
}
