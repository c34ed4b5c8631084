// PostgreSQL through pg: bounded pool and query time, int8 as bigint, connection errors that
// never crash the process, named prepared statements, and one pool per listed host with the
// move to another host when the one in use fails (pg itself connects to one host only).
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DEFAULT_POOL_MAX, type DriverOptions } from '../driver.js';
import { NodeSelector, type DatabaseNode } from '../nodes.js';
import type { SessionAttrs } from '../store-url.js';
import { classifyPostgresError } from './errors.js';

const MAX_PREPARED_STATEMENTS = 64;

function createPostgresPool(url: string, options: DriverOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolMax ?? DEFAULT_POOL_MAX,
    connectionTimeoutMillis: options.queryTimeoutMs,
    query_timeout: options.queryTimeoutMs,
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
  pool.on('error', (error) => options.logger.warn({ err: error }, 'idle PostgreSQL connection failed'));
  pool.on('connect', (client) => {
    client.on('error', (error) => options.logger.warn({ err: error }, 'PostgreSQL connection failed'));
  });
  return pool;
}

/** A node that answers but must not be used (a standby when writes are wanted): 'unavailable'. */
export class UnusableNodeError extends Error {
  override name = 'UnusableNodeError';
  /** SQLSTATE 25006 read_only_sql_transaction: classified 'unavailable' like a lost node. */
  readonly code = '25006';
}

/** Checks a new connection against target_session_attrs; once per connection. */
const SESSION_CHECKS: Record<Exclude<SessionAttrs, 'any'>, { sql: string; why: string }> = {
  'read-write': { sql: "select current_setting('transaction_read_only') = 'on' as refused", why: 'is read-only' },
  primary: { sql: 'select pg_is_in_recovery() as refused', why: 'is a standby (in recovery)' },
};

/** The pools of the listed hosts behind one Kysely pool: connections come from the node in use. */
export function createNodePools(nodes: readonly DatabaseNode[], sessionAttrs: SessionAttrs, options: DriverOptions) {
  const selector = new NodeSelector(
    nodes,
    nodes.map((node) => createPostgresPool(node.url, options)),
    (from, to) => options.logger.warn({ from: from.name, to: to.name }, 'PostgreSQL: moved to another node'),
  );
  const isUnavailable = (error: unknown) => classifyPostgresError(error) === 'unavailable';
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

  const pool = withPreparedStatements({
    connect: () => selector.acquire(connectTo, isUnavailable),
    // A query that finds its node gone (or read-only) moves the next connection elsewhere.
    queryFailed:
      nodes.length === 1
        ? undefined
        : (client, error) => {
            if (isUnavailable(error)) selector.failed(nodeOf.get(client) ?? 0);
          },
    end: async () => {
      await Promise.all(selector.pools.map((nodePool) => nodePool.end()));
    },
  });
  return { pool, selector };
}

interface Connections {
  connect(): Promise<pg.PoolClient>;
  /** Told of every failed query; undefined when nobody needs to know (one host). */
  queryFailed: ((client: pg.PoolClient, error: unknown) => void) | undefined;
  end(): Promise<void>;
}

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each time. Name the
 * parameterized ones (a small, fixed set of SQL texts) so each connection prepares them once.
 * Behind a transaction-mode pooler (PgBouncer < 1.21) named statements do not work.
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
        const { queryFailed } = connections;
        const failed =
          queryFailed &&
          ((error: unknown) => {
            queryFailed(client, error);
            throw error;
          });
        wrapper = {
          query(textOrCursor: unknown, parameters?: readonly unknown[]) {
            if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
            const name = parameters && parameters.length > 0 ? nameFor(textOrCursor) : undefined;
            const result =
              name === undefined
                ? client.query(textOrCursor, parameters as unknown[])
                : client.query({ name, text: textOrCursor, values: parameters as unknown[] });
            return failed ? result.catch(failed) : result;
          },
          release: () => client.release(),
        } as unknown as PostgresPoolClient;
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => connections.end(),
  };
}
