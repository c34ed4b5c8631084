// PostgreSQL through pg: bounded pool and query time, int8 as bigint, connection errors that
// never crash the process, named prepared statements, and one pool per listed host with the
// move to another host when the one in use fails (pg itself connects to one host only).
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DEFAULT_POOL_MAX, clientGraceMs, type DriverOptions } from '../driver.js';
import { NodeSelector, type DatabaseNode } from '../nodes.js';
import { describeDriverError } from '../errors.js';
import { classifyPostgresError } from './errors.js';
import type { SessionAttrs } from './postgres-config.js';

const MAX_PREPARED_STATEMENTS = 64;

function createPostgresPool(url: string, options: DriverOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? DEFAULT_POOL_MAX,
    // Bounds both opening a connection and waiting for a pooled one.
    connectionTimeoutMillis: options.queryTimeoutMs,
    // Sent when the connection opens: the server itself cancels (and rolls back) a statement
    // that runs, or waits for a lock, longer than this.
    statement_timeout: options.queryTimeoutMs,
    query_timeout: options.queryTimeoutMs + clientGraceMs(options.queryTimeoutMs),
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    types: {
      // int8 (oid 20) as bigint: the driver's default string would lose nothing, but bigint is what the store promises.
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? (value: string) => BigInt(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection lost while idle (pool 'error') or while in use (client 'error': pg-pool
  // removes its own listener on checkout) must not crash the process. The failing query
  // rejects on its own; pg-pool discards the broken client when it is released.
  pool.on('error', (error) => options.logger.warn(describeDriverError(error), 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.logger.warn(describeDriverError(error), 'PostgreSQL connection failed'));
  });
  return pool;
}

/** A node that answers but must not be used (a standby when writes are wanted): 'unavailable'. */
export class UnusableNodeError extends Error {
  override name = 'UnusableNodeError';
  /** SQLSTATE 25006 read_only_sql_transaction: classified 'unavailable' like a lost node. */
  readonly code = '25006';
}

/**
 * Checks a connection against target_session_attrs: each new one, and the node in use every
 * NODE_CHECK_INTERVAL_MS (a primary fenced read-only, or turned into a standby, without a
 * restart keeps its open connections: reads on them would go on from a node that no longer
 * gets the writes).
 */
const SESSION_CHECKS: Record<Exclude<SessionAttrs, 'any'>, { sql: string; why: string }> = {
  'read-write': { sql: "select current_setting('transaction_read_only') = 'on' as refused", why: 'is read-only' },
  primary: { sql: 'select pg_is_in_recovery() as refused', why: 'is a standby (in recovery)' },
};

/** How often the node in use is checked against target_session_attrs (noticed within twice this). */
const NODE_CHECK_INTERVAL_MS = 1_000;

/** 57014: the server cancelled the statement at statement_timeout (a lock held by another session, say); the node is fine. */
const STATEMENT_CANCELLED = '57014';
const READ_ONLY_TRANSACTION = '25006';

/** The pools of the listed hosts behind one Kysely pool: connections come from the node in use. */
export function createNodePools(nodes: readonly DatabaseNode[], sessionAttrs: SessionAttrs, options: DriverOptions) {
  const selector = new NodeSelector(
    nodes,
    nodes.map((node) => createPostgresPool(node.url, options)),
    (from, to) => options.logger.warn({ from: from.name, to: to.name }, 'PostgreSQL: moved to another node'),
  );
  const isUnavailable = (error: unknown) => classifyPostgresError(error) === 'unavailable';
  /** Unavailable because of the node (gone, read-only), not because one statement hit its time limit. */
  const meansNodeFailed = (error: unknown) => isUnavailable(error) && (error as { code?: unknown }).code !== STATEMENT_CANCELLED;
  const check = sessionAttrs === 'any' ? undefined : SESSION_CHECKS[sessionAttrs];
  /** The node of each connection, once it passed the session check. */
  const nodeOf = new WeakMap<pg.PoolClient, number>();

  async function connectTo(pool: pg.Pool, node: number): Promise<pg.PoolClient> {
    const client = await pool.connect();
    if (nodeOf.has(client)) return client;
    if (check !== undefined) {
      try {
        const { rows } = await client.query<{ refused: boolean }>(check.sql);
        if (rows[0]?.refused) throw new UnusableNodeError(`PostgreSQL node ${nodes[node]!.name} ${check.why}`);
      } catch (error) {
        // Closed, not kept: the node may be promoted, and its next connection checked again.
        client.release(true);
        throw error;
      }
    }
    nodeOf.set(client, node);
    return client;
  }

  /**
   * The node no longer serves as target_session_attrs asks: passed over, and every connection
   * to it closed (idle ones now, busy ones when released), so that none is used again unchecked.
   */
  function dropNode(node: number, why: string) {
    options.logger.warn({ node: nodes[node]!.name }, `PostgreSQL node ${why}: its connections are closed`);
    selector.failed(node);
    const old = selector.replacePool(node, createPostgresPool(nodes[node]!.url, options));
    old.end().catch(() => undefined);
  }

  let checking = false;
  async function checkNodeInUse(sessionCheck: { sql: string; why: string }) {
    if (checking) return;
    checking = true;
    const node = selector.inUseIndex;
    try {
      const client = await selector.pools[node]!.connect();
      try {
        const { rows } = await client.query<{ refused: boolean }>(sessionCheck.sql);
        client.release();
        if (rows[0]?.refused) dropNode(node, sessionCheck.why);
      } catch (error) {
        client.release(true);
        throw error;
      }
    } catch {
      // Down, or every connection busy: the requests themselves find out and move on.
    } finally {
      checking = false;
    }
  }
  const checkTimer = check && setInterval(() => void checkNodeInUse(check), NODE_CHECK_INTERVAL_MS).unref();

  /** A connection of the node in use, checked as target_session_attrs asks. */
  const connect = () => selector.acquire(connectTo, isUnavailable);
  const pool = withPreparedStatements({
    connect,
    // A query that finds its node gone moves the next connection elsewhere; one that finds it
    // read-only also closes its other connections.
    queryFailed: (client, error) => {
      if (!meansNodeFailed(error)) return;
      const node = nodeOf.get(client) ?? 0;
      if ((error as { code?: unknown }).code === READ_ONLY_TRANSACTION) dropNode(node, 'is read-only');
      else if (nodes.length > 1) selector.failed(node);
    },
    end: async () => {
      if (checkTimer) clearInterval(checkTimer);
      await Promise.all(selector.pools.map((nodePool) => nodePool.end()));
    },
  });
  return { pool, selector, connect };
}

interface Connections {
  connect(): Promise<pg.PoolClient>;
  /** Told of every failed query. */
  queryFailed(client: pg.PoolClient, error: unknown): void;
  end(): Promise<void>;
}

/** Per connection: whether it was given up on (a query the server did not answer in time, a lost socket). */
interface ClientState {
  broken: boolean;
}

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each time. Name the
 * parameterized ones (a small, fixed set of SQL texts) so each connection prepares them once.
 * Behind a transaction-mode pooler (PgBouncer < 1.21) named statements do not work.
 *
 * A query that fails without an answer from the server (pg's query_timeout, a lost socket)
 * leaves the connection busy with a statement the server may still be running: it is closed
 * when released, never handed out again, and any further query on it fails at once.
 */
function withPreparedStatements(connections: Connections): PostgresPool {
  const names = new Map<string, string>();
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const nameFor = (text: string): string | undefined => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) {
      name = `book_service_${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    async connect() {
      const client = await connections.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        const state: ClientState = { broken: false };
        const failed = (error: unknown) => {
          if (!(error instanceof pg.DatabaseError)) state.broken = true;
          connections.queryFailed(client, error);
          throw error;
        };
        wrapper = {
          query(textOrCursor: unknown, parameters?: readonly unknown[]) {
            if (state.broken) return Promise.reject(new Error('Client has encountered a connection error and is not queryable'));
            if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
            const name = parameters && parameters.length > 0 ? nameFor(textOrCursor) : undefined;
            const result =
              name === undefined
                ? client.query(textOrCursor, parameters as unknown[])
                : client.query({ name, text: textOrCursor, values: parameters as unknown[] });
            return result.catch(failed);
          },
          release: () => client.release(state.broken || undefined),
        } as unknown as PostgresPoolClient;
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => connections.end(),
  };
}
