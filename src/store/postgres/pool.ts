// PostgreSQL through pg: bounded pool and query time, int8 as bigint, connection errors that
// never crash the process, and named prepared statements.
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { DEFAULT_POOL_MAX, type DriverOptions } from '../driver.js';

const MAX_PREPARED_STATEMENTS = 64;

export function createPostgresPool(url: string, options: DriverOptions): pg.Pool {
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

/**
 * Kysely sends every query unnamed, so PostgreSQL parses and plans it each time. Name the
 * parameterized ones (a small, fixed set of SQL texts) so each connection prepares them once.
 * Behind a transaction-mode pooler (PgBouncer < 1.21) named statements do not work.
 */
export function withPreparedStatements(pool: pg.Pool): PostgresPool {
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
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = {
          query(textOrCursor: unknown, parameters?: readonly unknown[]) {
            if (typeof textOrCursor !== 'string') return client.query(textOrCursor as pg.Submittable);
            const name = parameters && parameters.length > 0 ? nameFor(textOrCursor) : undefined;
            return name === undefined
              ? client.query(textOrCursor, parameters as unknown[])
              : client.query({ name, text: textOrCursor, values: parameters as unknown[] });
          },
          release: () => client.release(),
        } as unknown as PostgresPoolClient;
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
