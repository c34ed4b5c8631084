// A private, throw-away PostgreSQL cluster that a test creates, starts, stops and restarts
// at will (outages, late starts), unlike the shared server the contract suites use.
// initdb refuses to run as root, so when the tests run as root the cluster belongs to the
// `postgres` user and every command runs through `runuser -u postgres`.
// Binaries: TEST_PG_BIN (default /usr/lib/postgresql/15/bin). Missing binaries:
// describeIf('pg-binaries') skips the suite (requirements.ts).
// Also what postgres-replication.ts shares with it: initdb and pg_ctl on one data directory.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { IS_ROOT, RUNUSER, assertPlainDatabaseName, childrenOf, makeScratchDir, missingTools, pollUntil, runTool, signalAll, systemUserIds } from './server-process.js';

export const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Undefined when a private cluster can be made here, else why not. */
export function privatePostgresUnavailable(): string | undefined {
  const tools = ['initdb', 'pg_ctl', 'postgres'].map((tool) => [join(PG_BIN, tool), 'set TEST_PG_BIN to the PostgreSQL bin directory'] as const);
  // As root every PostgreSQL tool runs through runuser as postgres: initdb refuses root.
  return missingTools([...tools, ...(IS_ROOT ? [[RUNUSER, 'needed as root: initdb refuses root'] as const] : [])], 'postgres');
}

export interface PrivatePostgres {
  port: number;
  /** DB_URL of the cluster's `postgres` database (trust auth, user postgres). */
  url: string;
  dataDir: string;
  start(): Promise<void>;
  /** `fast` closes sessions cleanly; `immediate` kills the server like a crash. */
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  isRunning(): Promise<boolean>;
  /**
   * Freezes the running server (SIGSTOP to the postmaster and every backend): it accepts TCP
   * connections into the kernel backlog but never answers, like a hung host.
   */
  freeze(): Promise<void>;
  /** Resumes a frozen server (SIGCONT to the processes `freeze` stopped). */
  thaw(): void;
  /** Creates a database on the running cluster and returns its DB_URL. */
  createDatabase(name: string): Promise<string>;
  /** Stops the cluster if it runs and deletes every file. Safe to call twice. */
  destroy(): Promise<void>;
}

/** Runs a tool of PG_BIN to its end, as the `postgres` user when the tests run as root. */
export async function pgTool(tool: string, args: string[]): Promise<void> {
  await runTool(join(PG_BIN, tool), args, { asUser: 'postgres' });
}

/** The `postgres` user's ids when the tests run as root (the owner of every cluster file), else undefined. */
export const clusterOwner = () => (IS_ROOT ? systemUserIds('postgres') : undefined);

/** initdb and pg_ctl for the data directory `<root>/<name>`; its server on 127.0.0.1:`port` has its socket and `<name>.log` in `root`. */
export function pgDataDir(root: string, name: string, port: number) {
  const dataDir = join(root, name);
  const logFile = join(root, `${name}.log`);
  const pgCtl = (args: string[]) => pgTool('pg_ctl', ['-D', dataDir, ...args]);
  return {
    dataDir,
    logFile,
    initdb: () => pgTool('initdb', ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']),
    /** `settings`: more `-c name=value` options for the server. */
    start(settings: string[] = []) {
      // Unix socket in our own directory (the default /var/run/postgresql may not be ours);
      // fsync off: the cluster is thrown away, and the tests are about outages, not disks (a
      // SIGKILLed postmaster loses nothing the OS has).
      const options = [`-p ${port}`, `-k ${root}`, '-c listen_addresses=127.0.0.1', '-c fsync=off', '-c max_connections=100', ...settings];
      return pgCtl(['-o', options.join(' '), '-l', logFile, '-w', '-t', '30', 'start']);
    },
    stop: (mode: 'fast' | 'immediate' = 'fast') => pgCtl(['-m', mode, '-w', '-t', '30', 'stop']),
    promote: () => pgCtl(['-w', '-t', '30', 'promote']),
    isRunning: () => pgCtl(['status']).then(() => true, () => false),
    /** The postmaster's pid from postmaster.pid; undefined while there is none. */
    postmasterPid(): number | undefined {
      try {
        const pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
        return Number.isFinite(pid) ? pid : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

/** Runs one statement on a fresh connection to `url` and returns its rows. */
export async function queryOnce<T extends pg.QueryResultRow = pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** initdb a new cluster on a free port (not started). */
export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const root = makeScratchDir('books-pg-', clusterOwner());
  const port = await freePort();
  const server = pgDataDir(root.path, 'data', port);
  let destroyed = false;
  let frozen: number[] = [];

  await server.initdb();

  const cluster: PrivatePostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir: server.dataDir,
    start: () => server.start(),
    stop: (mode) => server.stop(mode),
    isRunning: () => server.isRunning(),
    async freeze() {
      const postmaster = server.postmasterPid();
      if (postmaster === undefined) throw new Error('freeze: the cluster is not running');
      // The postmaster first, so it forks no backend after its children are listed (a backend
      // forked in between kept answering through a whole "hang" once, seen in CI). Then its
      // children, listed again until each one shows as stopped (signals arrive asynchronously).
      process.kill(postmaster, 'SIGSTOP');
      frozen = [postmaster];
      let running: number[] = [];
      const allStopped = () => {
        running = [postmaster, ...childrenOf(postmaster)].filter((pid) => !isStopped(pid));
        for (const pid of running) {
          process.kill(pid, 'SIGSTOP');
          if (!frozen.includes(pid)) frozen.push(pid);
        }
        return running.length === 0;
      };
      await pollUntil(allStopped, 5000, 10, () => `freeze: processes ${running.join(', ')} still run after 5 s`);
    },
    thaw() {
      signalAll(frozen, 'SIGCONT');
      frozen = [];
    },
    async createDatabase(name: string) {
      assertPlainDatabaseName(name);
      await queryOnce(cluster.url, `create database ${name}`);
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      cluster.thaw();
      if (await server.isRunning()) await server.stop('immediate').catch(() => undefined);
      root.remove();
    },
  };
  return cluster;
}

/**
 * True once `pid` runs no more: stopped by a signal (state T in /proc), exited (Z: a backend that
 * ended as the postmaster was stopped stays unreaped), or gone.
 */
function isStopped(pid: number): boolean {
  try {
    // The state follows the command name, which is in parentheses and may hold spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state === 'T' || state === 'Z' || state === 'X';
  } catch {
    return true;
  }
}
