// One host's mysql2 pool, counted by us. mysql2 keeps its counts in private fields only, so
// this wrapper keeps its own, from the pool's public events and from the connections it hands
// out, and queues the requests that find every connection busy itself: mysql2 is asked for a
// connection only when it can give one at once (a free one, or a new one under the limit), so
// its own queue stays empty and a request waits here, where DB_QUERY_TIMEOUT bounds the wait.
import type { Pool, PoolConnection } from 'mysql2';
import { PoolWaitTimeoutError } from './errors.js';

/** What the pool holds now: `total` = `idle` + connections in use or being opened; `waiting` = requests queued for one. */
export interface PoolCounts {
  total: number;
  idle: number;
  waiting: number;
}

export class CountedPool {
  /** Connections in mysql2's free list. */
  private readonly idle = new Set<PoolConnection>();
  /** Connections handed out and not yet released, destroyed or lost. */
  private readonly inUse = new Set<PoolConnection>();
  /** Every open connection, to destroy the ones still open when closing takes too long. */
  private readonly open = new Set<PoolConnection>();
  /** Requests mysql2 has not answered yet: a free connection on its way, or a new one opening. */
  private asked = 0;
  /** Requests that found every connection busy, oldest first. */
  private readonly queue: Array<() => void> = [];
  private closed = false;

  /**
   * `limit` must be the pool's connectionLimit; a request waits at most `waitLimitMs` for a
   * connection (then PoolWaitTimeoutError).
   */
  constructor(
    private readonly pool: Pool,
    private readonly limit: number,
    private readonly waitLimitMs: number,
  ) {
    pool.on('connection', (connection) => {
      this.open.add(connection);
      // Lost (the server closed it, a network error) or destroyed: mysql2 drops it from the pool too.
      const forget = () => this.forget(connection);
      connection.on('end', forget);
      connection.on('error', forget);
    });
    pool.on('release', (connection) => this.idle.add(connection));
    pool.on('acquire', (connection) => this.idle.delete(connection));
  }

  counts(): PoolCounts {
    const idle = this.idle.size;
    return { total: idle + this.busy, idle, waiting: this.queue.length };
  }

  /** A pooled connection, or a PoolWaitTimeoutError once the wait limit has passed without one. */
  acquire(): Promise<PoolConnection> {
    return new Promise((resolve, reject) => {
      let waiting = true;
      const ask = () => {
        this.asked += 1;
        this.pool.getConnection((error, connection) => {
          this.asked -= 1;
          clearTimeout(timer);
          if (error) {
            this.serveQueue();
            reject(error);
            return;
          }
          this.inUse.add(connection);
          // Too late for the request that asked: back to the pool for the next one.
          if (!waiting) this.release(connection);
          else resolve(connection);
        });
      };
      const timer = setTimeout(() => {
        waiting = false;
        const queued = this.queue.indexOf(ask);
        if (queued >= 0) this.queue.splice(queued, 1);
        reject(new PoolWaitTimeoutError(this.waitLimitMs));
      }, this.waitLimitMs);
      // Once closed, mysql2 answers at once that it is.
      if (this.closed || (this.queue.length === 0 && this.busy < this.limit)) ask();
      else this.queue.push(ask);
    });
  }

  /** Gives a connection back for the next request. */
  release(connection: PoolConnection): void {
    if (!this.inUse.delete(connection)) return;
    connection.release();
    this.serveQueue();
  }

  /** Closes a connection that must not be used again; the next request gets a new one. */
  destroy(connection: PoolConnection): void {
    connection.destroy();
    this.forget(connection);
  }

  /**
   * Closes the pool. mysql2 says goodbye on every connection and waits for each to close,
   * forever if the node hangs: past `graceMs` the rest are destroyed, so closing never hangs.
   */
  end(graceMs: number): Promise<void> {
    this.closed = true;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        for (const connection of this.open) connection.destroy();
        resolve();
      }, graceMs);
      this.pool.end(() => {
        clearTimeout(timer);
        resolve();
      });
      // The queued requests fail at once ("Pool is closed."), as they did in mysql2's own queue.
      for (const ask of this.queue.splice(0)) ask();
    });
  }

  /** Connections in use or being opened. */
  private get busy(): number {
    return this.asked + this.inUse.size;
  }

  private forget(connection: PoolConnection): void {
    this.open.delete(connection);
    this.idle.delete(connection);
    if (this.inUse.delete(connection)) this.serveQueue();
  }

  /** Lets queued requests ask mysql2 while it can answer at once. */
  private serveQueue(): void {
    while (this.queue.length > 0 && this.busy < this.limit) this.queue.shift()!();
  }
}
