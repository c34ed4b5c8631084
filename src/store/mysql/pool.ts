// MySQL / MariaDB through mysql2: bounded pool, exact big integers, utf8mb4, connection
// errors that never crash the process; one pool per listed host, with the move to another host
// when the one in use fails; causal reads and writes on a Galera cluster; a statement that runs
// past DB_QUERY_TIMEOUT stopped by the server itself (so its 503 means it was rolled back).
import type { MysqlPool, MysqlPoolConnection } from 'kysely';
import { createPool as createMysqlPool, type PoolConnection } from 'mysql2';
import type { PoolStats } from '../book-store.js';
import { DEFAULT_POOL_MAX, clientGraceMs, type DriverOptions, type RawMysqlConnection } from '../driver.js';
import { NodeSelector, type DatabaseNode } from '../nodes.js';
import { describeDriverError } from '../errors.js';
import { CountedPool } from './counted-pool.js';
import { NoAnswerError, PoolWaitTimeoutError, SessionSetupError, classifyMysqlError, isMysqlStatementTimeout, isServerAnswer } from './errors.js';

const ER_UNKNOWN_SYSTEM_VARIABLE = 1193;

/**
 * What every new connection is told before it is used, one statement, the first of these the
 * server knows (1193 "unknown variable" moves on to the next):
 * - the statement time limit, enforced by the server: MariaDB's max_statement_time covers every
 *   statement and lock wait; MySQL's max_execution_time covers SELECT only, so its lock waits
 *   (row and metadata) are bounded too, in whole seconds;
 * - on a Galera cluster, wsrep_sync_wait = 7: reads (1), UPDATE/DELETE (2) and INSERT (4) wait
 *   until the node has applied every write the cluster committed before them, so a client reads,
 *   changes and deletes its own write through any node. Without wsrep (plain MySQL, a MariaDB
 *   built without it) the variable does not exist.
 */
function sessionSettings(queryTimeoutMs: number): string[] {
  const seconds = queryTimeoutMs / 1000;
  const wholeSeconds = Math.max(1, Math.ceil(seconds));
  const mysqlLimits = `max_execution_time = ${Math.ceil(queryTimeoutMs)}, innodb_lock_wait_timeout = ${wholeSeconds}, lock_wait_timeout = ${wholeSeconds}`;
  return [
    `SET SESSION max_statement_time = ${seconds}, wsrep_sync_wait = 7`,
    `SET SESSION max_statement_time = ${seconds}`,
    `SET SESSION ${mysqlLimits}, wsrep_sync_wait = 7`,
    `SET SESSION ${mysqlLimits}`,
  ];
}

function createNodePool(node: DatabaseNode, options: DriverOptions): CountedPool {
  const connectionLimit = options.poolMax ?? DEFAULT_POOL_MAX;
  const pool = createMysqlPool({
    uri: node.url,
    connectionLimit,
    connectTimeout: options.queryTimeoutMs,
    supportBigNumbers: true,
    bigNumberStrings: true,
    charset: 'utf8mb4',
    enableKeepAlive: true,
  });
  pool.on('connection', (connection) => {
    // Every connection gets a lasting listener, so a dropped one cannot crash the process.
    connection.on('error', (error: unknown) => options.logger.warn({ ...describeDriverError(error), node: node.name }, 'MySQL connection failed'));
  });
  // A request waits for a pooled connection no longer than for a statement.
  return new CountedPool(pool, connectionLimit, options.queryTimeoutMs);
}

/** The pools of the listed hosts behind one Kysely pool: connections come from the node in use. */
export function createNodePools(nodes: readonly DatabaseNode[], options: DriverOptions) {
  const selector = new NodeSelector(
    nodes,
    nodes.map((node) => createNodePool(node, options)),
    (from, to) => options.logger.warn({ from: from.name, to: to.name }, 'MySQL: moved to another node'),
  );
  // Every connection busy, or a statement stopped at its time limit (a lock held by another
  // session), says nothing about the node: it is not passed over for those.
  const isUnavailable = (error: unknown) =>
    classifyMysqlError(error) === 'unavailable' && !(error instanceof PoolWaitTimeoutError) && !isMysqlStatementTimeout(error);
  const wrappers = new WeakMap<PoolConnection, MysqlPoolConnection>();
  /** Connections whose session settings are in place. */
  const ready = new WeakSet<PoolConnection>();
  /** Per node pool: the index in sessionSettings() its server accepted (all connections of a node agree). */
  const settingsChosen = new Map<CountedPool, number>();
  /** Per node pool: what its server says `select version()` is, asked on its first connection. */
  const versions = new Map<CountedPool, string>();
  const settings = sessionSettings(options.queryTimeoutMs);
  const clientTimeoutMs = options.queryTimeoutMs + clientGraceMs(options.queryTimeoutMs);

  /** Sends the session settings on a new connection; a connection without them is destroyed, never used. */
  async function prepare(pool: CountedPool, connection: PoolConnection, node: number): Promise<void> {
    for (let index = settingsChosen.get(pool) ?? 0; index < settings.length; index += 1) {
      try {
        await runOn(connection, settings[index]!, clientTimeoutMs);
        if (!versions.has(pool)) versions.set(pool, await serverVersion(connection, clientTimeoutMs));
        settingsChosen.set(pool, index);
        ready.add(connection);
        return;
      } catch (error) {
        if ((error as { errno?: unknown }).errno === ER_UNKNOWN_SYSTEM_VARIABLE) continue;
        pool.destroy(connection);
        throw new SessionSetupError(nodes[node]!.name, { cause: error });
      }
    }
    pool.destroy(connection);
    throw new SessionSetupError(nodes[node]!.name, { cause: new Error('the server knows none of the timeout variables') });
  }

  /**
   * The connection as Kysely uses it. A query the server does not answer within the client's
   * own limit leaves the connection in an unknown state (the statement may still run, a
   * transaction may be open): it is destroyed at once, so it is never used again, and any
   * query still asked of it fails at once. A query that finds the node gone moves the next
   * connection elsewhere.
   */
  function wrap(pool: CountedPool, connection: PoolConnection, node: number): MysqlPoolConnection {
    let wrapper = wrappers.get(connection);
    if (wrapper) return wrapper;
    let broken = false;
    wrapper = {
      query(sql: string, parameters: unknown[], callback?: (error: unknown, result: never) => void) {
        if (callback === undefined) return connection.query(sql, parameters);
        if (broken) {
          process.nextTick(callback, new NoAnswerError(nodes[node]!.name), undefined as never);
          return undefined;
        }
        connection.query({ sql, values: parameters, timeout: clientTimeoutMs }, (error: unknown, result: unknown) => {
          if (error && !isServerAnswer(error)) {
            broken = true;
            pool.destroy(connection);
          }
          if (error && isUnavailable(error)) selector.failed(node);
          callback(error, result as never);
        });
        return undefined;
      },
      release: () => (broken ? undefined : pool.release(connection)),
    } as MysqlPoolConnection;
    wrappers.set(connection, wrapper);
    return wrapper;
  }

  /** A connection of the node in use as mysql2 makes it, its session set up (BookStoreDriver.mysqlConnection). */
  const rawConnection = () =>
    selector.acquire(async (nodePool, node): Promise<RawMysqlConnection> => {
      const connection = await nodePool.acquire();
      if (!ready.has(connection)) await prepare(nodePool, connection, node);
      return {
        connection,
        timeoutMs: clientTimeoutMs,
        release: (destroy = false) => (destroy ? nodePool.destroy(connection) : nodePool.release(connection)),
      };
    }, isUnavailable);

  const pool: MysqlPool = {
    getConnection(callback) {
      selector
        .acquire(async (nodePool, node) => {
          const connection = await nodePool.acquire();
          if (!ready.has(connection)) await prepare(nodePool, connection, node);
          return wrap(nodePool, connection, node);
        }, isUnavailable)
        .then(
          (connection) => callback(null, connection),
          (error: unknown) => callback(error, undefined as never),
        );
    },
    end(callback) {
      // At most 5 s: the migrations' connections have a limit of minutes.
      Promise.all(selector.pools.map((nodePool) => nodePool.end(Math.min(options.queryTimeoutMs, 5_000)))).then(
        () => callback(null),
        callback,
      );
    },
  };
  /** What the node in use said its version is: undefined until a connection to it has been set up (openStore connects first). */
  const versionInUse = () => versions.get(selector.poolInUse);
  /** Which server the node in use is, for traces: MariaDB says so in its version; undefined until asked. */
  const mariaDbInUse = () => {
    const version = versionInUse();
    return version === undefined ? undefined : /-MariaDB/i.test(version);
  };
  return { pool, selector, versionInUse, mariaDbInUse, rawConnection };
}

/** The server's version, as `select version()` says it. */
function serverVersion(connection: PoolConnection, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    connection.query({ sql: 'select version() as version', timeout: timeoutMs }, (error: unknown, rows: unknown) =>
      error ? reject(error) : resolve(String((rows as Array<{ version?: unknown }>)[0]?.version ?? '')),
    );
  });
}

/** One statement on a connection, bounded by the client's limit (the connection is destroyed by the caller on failure). */
function runOn(connection: PoolConnection, sql: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    connection.query({ sql, timeout: timeoutMs }, (error: unknown) => (error ? reject(error) : resolve()));
  });
}

/** The node pool's own counts (see counted-pool.ts) and its limit. */
export function mysqlPoolStats(pool: CountedPool, options: DriverOptions): PoolStats {
  return { ...pool.counts(), max: options.poolMax ?? DEFAULT_POOL_MAX };
}
