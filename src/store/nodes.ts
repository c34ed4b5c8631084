// The database hosts DB_URL lists, and which one is in use. A URL may name several hosts, as
// libpq and JDBC users write it: `mysql://u:pw@h1:3311,h2:3312/books`. The service works on one
// node at a time: the first usable one in list order, and it stays there; when that node fails
// it moves on to the next usable one, without a restart. PostgreSQL and MySQL share this; what
// "usable" means beyond "answers" (a primary, a synced Galera node) is the database module's.

/** One host of DB_URL. */
export interface DatabaseNode {
  /** `host:port`, for logs and metrics (never holds the password). */
  name: string;
  /** DB_URL with this host only: what the driver connects to. */
  url: string;
}

/**
 * Splits a network DB_URL into one URL per listed host (the user, password, database and
 * parameters are shared). Throws `Invalid` naming DB_URL for an empty host or a bad port.
 */
export function splitHosts(url: string, defaultPort: number, Invalid: new (message: string) => Error = Error): DatabaseNode[] {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url);
  if (!match) return [{ name: `localhost:${defaultPort}`, url }];
  const [, scheme = '', authority = '', rest = ''] = match;
  const at = authority.lastIndexOf('@');
  const userInfo = authority.slice(0, at + 1);
  const hostList = authority.slice(at + 1);
  // No host: the driver's default (a local socket or localhost).
  if (hostList === '') return [{ name: `localhost:${defaultPort}`, url }];
  const hosts = hostList.split(',');
  return hosts.map((host) => {
    const { name, hostname } = parseHost(host, defaultPort, Invalid);
    if (hostname === '') throw new Invalid(`DB_URL lists an empty host in "${hostList}"`);
    return { name, url: hosts.length === 1 ? url : `${scheme}${userInfo}${host}${rest}` };
  });
}

function parseHost(host: string, defaultPort: number, Invalid: new (message: string) => Error) {
  // [v6 address]:port, name:port, or either without a port.
  const match = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(host);
  const hostname = match?.[1] ?? '';
  const portText = match?.[2];
  if (portText === undefined) return { hostname, name: `${hostname}:${defaultPort}` };
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 1 && port <= 65_535)) throw new Invalid(`DB_URL host "${host}" has an invalid port (1-65535)`);
  return { hostname, name: `${hostname}:${port}` };
}

/** How long a node that failed is passed over while another one may be usable. */
const FAILED_NODE_PAUSE_MS = 2_000;

/**
 * The node in use and the order in which to try the others. One per store; `Pool` is the
 * driver's pool of one node.
 */
export class NodeSelector<Pool> {
  private current = 0;
  /** Per node: until when it is passed over (0: never failed). */
  private readonly pausedUntil: number[];

  private readonly nodePools: Pool[];

  constructor(
    readonly nodes: readonly DatabaseNode[],
    pools: readonly Pool[],
    private readonly onSwitch: (from: DatabaseNode, to: DatabaseNode) => void,
  ) {
    this.pausedUntil = nodes.map(() => 0);
    this.nodePools = [...pools];
  }

  /** Each node's pool, in list order. */
  get pools(): readonly Pool[] {
    return this.nodePools;
  }

  /** Puts a new pool in place of a node's (its connections can no longer be trusted); returns the old one to close. */
  replacePool(node: number, pool: Pool): Pool {
    const old = this.nodePools[node]!;
    this.nodePools[node] = pool;
    return old;
  }

  /** The index in `nodes` of the node in use. */
  get inUseIndex(): number {
    return this.current;
  }

  /** The node the service works on now. */
  get inUse(): DatabaseNode {
    return this.nodes[this.current]!;
  }

  /** The pool of the node in use: its statistics are the store's. */
  get poolInUse(): Pool {
    return this.nodePools[this.current]!;
  }

  /**
   * A connection from the node in use, or else from the next usable node after it.
   * `connect` must fail with an error `isUnavailable` accepts when its node cannot serve
   * (down, not synced, read-only…); any other error is thrown at once. When every node
   * fails, the last node's error is thrown.
   */
  async acquire<Connection>(
    connect: (pool: Pool, node: number) => Promise<Connection>,
    isUnavailable: (error: unknown) => boolean,
  ): Promise<Connection> {
    // One host: nothing to choose or remember (the hot path of most deployments).
    if (this.nodes.length === 1) return connect(this.nodePools[0]!, 0);
    let lastError: unknown;
    for (const node of this.candidates()) {
      try {
        const connection = await connect(this.nodePools[node]!, node);
        this.use(node);
        return connection;
      } catch (error) {
        if (!isUnavailable(error)) throw error;
        this.failed(node);
        lastError = error;
      }
    }
    throw lastError;
  }

  /** A node answered as unusable (lost connection, not synced, read-only): pass it over for a while. */
  failed(node: number): void {
    this.pausedUntil[node] = Date.now() + FAILED_NODE_PAUSE_MS;
  }

  private use(node: number): void {
    this.pausedUntil[node] = 0;
    if (node === this.current) return;
    const from = this.inUse;
    this.current = node;
    this.onSwitch(from, this.inUse);
  }

  /**
   * The node in use first, then the ones after it in list order (wrapping round); nodes that
   * failed within the pause are left out. If all did, only the one whose pause ends first is
   * tried, so an outage costs each request one attempt, not one per node.
   */
  private candidates(): readonly number[] {
    const count = this.nodes.length;
    const now = Date.now();
    const order: number[] = [];
    for (let step = 0; step < count; step += 1) {
      const node = (this.current + step) % count;
      if (this.pausedUntil[node]! <= now) order.push(node);
    }
    if (order.length > 0) return order;
    let soonest = 0;
    for (let node = 1; node < count; node += 1) if (this.pausedUntil[node]! < this.pausedUntil[soonest]!) soonest = node;
    return [soonest];
  }
}

/**
 * "the database "books" does not exist on host:port: create it with `<command>`", the command
 * made by `create` from the node's URL (host, port, user, database; no password).
 */
export function missingDatabaseSentence(node: DatabaseNode, create: (parts: { host: string; port: string; user: string; database: string }) => string): string {
  const url = new URL(node.url);
  const parts = { host: url.hostname, port: url.port, user: decodeURIComponent(url.username), database: decodeURIComponent(url.pathname.replace(/^\//, '')) };
  return `the database "${parts.database}" does not exist on ${node.name}: create it with \`${create(parts)}\`, or name another in DB_URL`;
}
