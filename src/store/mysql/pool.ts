// MySQL / MariaDB through mysql2: bounded pool, exact big integers, utf8mb4, connection
// errors that never crash the process; one pool per listed host, with the move to another host
// when the one in use fails; causal reads on a Galera cluster.
import type { MysqlPool, MysqlPoolConnection } from 'kysely';
import { createPool as createMysqlPool, type Pool, type PoolConnection } from 'mysql2';
import type { PoolStats } from '../book-store.js';
import { DEFAULT_POOL_MAX, type DriverOptions } from '../driver.js';
import { NodeSelector, type DatabaseNode } from '../nodes.js';
import { classifyMysqlError } from './errors.js';

/**
 * Galera: a read waits until the node has applied every write the cluster committed before it,
 * so a client reads its own write through any node (without it, reads on another node miss a
 * write just committed). MySQL has no such variable (1193, ignored); on a MariaDB without a
 * cluster it changes nothing.
 */
const CAUSAL_READS = 'SET SESSION wsrep_sync_wait = 1';
const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

function createNodePool(node: DatabaseNode, options: DriverOptions): Pool {
  const pool = createMysqlPool({
    uri: node.url,
    connectionLimit: options.poolMax ?? DEFAULT_POOL_MAX,
    connectTimeout: options.queryTimeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  // Emitted before the new connection is handed out: its first command is the session setting.
  pool.on('connection', (connection) => {
    // Every connection gets a lasting listener, so a dropped one cannot crash the process.
    connection.on('error', (error: unknown) => options.logger.warn({ err: error, node: node.name }, 'MySQL connection failed'));
    connection.query(CAUSAL_READS, (error: (Error & { errno?: number }) | null) => {
      if (error && error.errno !== ER_UNKNOWN_SYSTEM_VARIABLE) {
        options.logger.warn({ err: error, node: node.name }, 'MySQL: cannot set wsrep_sync_wait');
      }
    });
  });
  return pool;
}

/** The pools of the listed hosts behind one Kysely pool: connections come from the node in use. */
export function createNodePools(nodes: readonly DatabaseNode[], options: DriverOptions) {
  const selector = new NodeSelector(
    nodes,
    nodes.map((node) => createNodePool(node, options)),
    (from, to) => options.logger.warn({ from: from.name, to: to.name }, 'MySQL: moved to another node'),
  );
  const isUnavailable = (error: unknown) => classifyMysqlError(error) === 'unavailable';
  const wrappers = new WeakMap<PoolConnection, MysqlPoolConnection>();

  const connectTo = (pool: Pool) =>
    new Promise<PoolConnection>((resolve, reject) => {
      pool.getConnection((error, connection) => (error ? reject(error) : resolve(connection)));
    });

  /**
   * The connection as Kysely uses it, each query bounded by DB_QUERY_TIMEOUT; a query that finds
   * the node gone moves the next connection elsewhere.
   */
  function wrap(connection: PoolConnection, node: number): MysqlPoolConnection {
    let wrapper = wrappers.get(connection);
    if (wrapper) return wrapper;
    wrapper = {
      query(sql: string, parameters: unknown[], callback?: (error: unknown, result: never) => void) {
        if (callback === undefined) return connection.query(sql, parameters);
        // mysql2 has no pool-wide query timeout: without one a node that stops answering (hung,
        // partitioned) would hold the request forever. On timeout the connection is destroyed.
        connection.query({ sql, values: parameters, timeout: options.queryTimeoutMs }, (error: unknown, result: unknown) => {
          if (error && isUnavailable(error)) selector.failed(node);
          callback(error, result as never);
        });
        return undefined;
      },
      release: () => connection.release(),
    } as MysqlPoolConnection;
    wrappers.set(connection, wrapper);
    return wrapper;
  }

  const pool: MysqlPool = {
    getConnection(callback) {
      selector.acquire(async (nodePool, node) => wrap(await connectTo(nodePool), node), isUnavailable).then(
        (connection) => callback(null, connection),
        (error: unknown) => callback(error, undefined as never),
      );
    },
    end(callback) {
      Promise.all(selector.pools.map((nodePool) => endNodePool(nodePool, options.queryTimeoutMs))).then(
        () => callback(null),
        callback,
      );
    },
  };
  return { pool, selector };
}

/**
 * Closes a node's pool. mysql2 says goodbye on every connection and waits for each to close,
 * forever if the node hangs: past `graceMs` the rest are destroyed, so shutdown never hangs.
 */
function endNodePool(pool: Pool, graceMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      const { _allConnections: open } = pool as unknown as { _allConnections: { toArray(): PoolConnection[] } };
      for (const connection of open.toArray()) connection.destroy();
      resolve();
    }, graceMs);
    pool.end(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** mysql2 exposes no counters; its queues are stable internals since 1.x. */
export function mysqlPoolStats(pool: Pool, options: DriverOptions): PoolStats {
  const internals = pool as unknown as Record<'_allConnections' | '_freeConnections' | '_connectionQueue', { length: number }>;
  return {
    total: internals._allConnections.length,
    idle: internals._freeConnections.length,
    waiting: internals._connectionQueue.length,
    max: options.poolMax ?? DEFAULT_POOL_MAX,
  };
}
