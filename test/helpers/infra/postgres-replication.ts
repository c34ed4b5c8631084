// A private PostgreSQL primary with one synchronous streaming standby, for failover tests:
// the primary crashes (SIGKILL of the postmaster and every backend), the standby is promoted.
//
// Synchronous: `synchronous_standby_names = '*'` on the primary (synchronous_commit = on), so
// a COMMIT returns only once the standby has flushed its WAL. Without it a commit the primary
// acknowledged may never reach the standby, and the database itself loses it at failover.
// The setting is passed on the primary's command line only, never written to a file the
// standby copies: a promoted standby with it would wait forever for a standby of its own.
//
// Like postgres-cluster.ts: throw-away clusters under a temp dir, as the `postgres` user when
// root, binaries from TEST_PG_BIN (describeIf('pg-binaries')).
import { chownSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.js';
import { IS_ROOT, PG_BIN, asPostgres, childrenOf, privatePostgresUnavailable, userIds } from './postgres-cluster.js';

export interface PostgresServer {
  /** 'primary' or 'standby': the role each server was started in (the standby keeps its name once promoted). */
  name: 'primary' | 'standby';
  port: number;
  /** `127.0.0.1:<port>`, as in a multi-host DB_URL and in book_store_node_in_use. */
  address: string;
  dataDir: string;
  /** DB_URL of `database` on this server only (trust auth, user postgres). */
  url(database: string): string;
}

export interface PostgresReplication {
  primary: PostgresServer;
  standby: PostgresServer;
  /** Milliseconds `startPostgresReplication` took. */
  startupMs: number;
  /**
   * `postgres://postgres@127.0.0.1:<primary>,127.0.0.1:<standby>/<database>?target_session_attrs=read-write`
   * (servers in the order given; default primary first).
   */
  multiHostUrl(database: string, order?: ReadonlyArray<'primary' | 'standby'>): string;
  /** Creates a database on the primary, waits until the standby has it, returns the multi-host DB_URL. */
  createDatabase(name: string): Promise<string>;
  /** Runs one statement on a server (fresh connection) and returns its rows. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(server: 'primary' | 'standby', sql: string, params?: unknown[], database?: string): Promise<T[]>;
  /** pg_is_in_recovery() on a running server. */
  inRecovery(server: 'primary' | 'standby'): Promise<boolean>;
  /** pg_stat_replication on the primary: the standby's sync_state ('sync' once it streams synchronously). */
  syncState(): Promise<string | undefined>;
  /** A crash: SIGKILL to the primary's postmaster and every one of its processes, at once. */
  killPrimary(): Promise<void>;
  /** `pg_ctl promote` on the standby; resolves once pg_is_in_recovery() is false there. */
  promoteStandby(): Promise<void>;
  /** Whether a server's postmaster runs. */
  isRunning(server: 'primary' | 'standby'): Promise<boolean>;
  /** Server log of one of them, last `lines` lines. */
  logTail(server: 'primary' | 'standby', lines?: number): string;
  /** Stops both (immediate) and deletes every file. Safe to call twice; also runs on process exit. */
  destroy(): Promise<void>;
}

/** Starts a primary and a synchronous standby streaming from it; resolves once the standby is `sync`. */
export async function startPostgresReplication(): Promise<PostgresReplication> {
  const reason = privatePostgresUnavailable();
  if (reason !== undefined) throw new Error(`cannot start a PostgreSQL primary + standby: ${reason}`);
  const began = Date.now();
  const root = mkdtempSync(join(tmpdir(), 'books-pg-repl-'));
  if (IS_ROOT) {
    const { uid, gid } = userIds();
    chownSync(root, uid, gid);
  }
  const pgCtl = join(PG_BIN, 'pg_ctl');
  const server = (name: 'primary' | 'standby', port: number): PostgresServer => ({
    name,
    port,
    address: `127.0.0.1:${port}`,
    dataDir: join(root, name),
    url: (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`,
  });
  const primary = server('primary', await freePort());
  const standby = server('standby', await freePort());
  const servers = { primary, standby };
  const logFile = (which: 'primary' | 'standby') => join(root, `${which}.log`);
  let destroyed = false;

  const postmasterPid = (which: 'primary' | 'standby'): number | undefined => {
    try {
      return Number(readFileSync(join(servers[which].dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    } catch {
      return undefined;
    }
  };
  const killTree = (which: 'primary' | 'standby') => {
    const pid = postmasterPid(which);
    if (pid === undefined || !Number.isFinite(pid)) return;
    for (const target of [pid, ...childrenOf(pid)]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  const onExit = () => {
    killTree('primary');
    killTree('standby');
    rmSync(root, { recursive: true, force: true });
  };
  process.on('exit', onExit);

  const start = async (which: 'primary' | 'standby') => {
    const { port } = servers[which];
    // fsync off: thrown away, and a SIGKILLed postmaster loses nothing the OS has.
    const options = [
      `-p ${port}`,
      `-k ${root}`,
      '-c listen_addresses=127.0.0.1',
      '-c fsync=off',
      '-c max_connections=100',
      '-c wal_level=replica',
      '-c max_wal_senders=5',
      '-c hot_standby=on',
      '-c wal_keep_size=64MB',
      '-c cluster_name=' + which,
      ...(which === 'primary' ? ["-c synchronous_standby_names='*'", '-c synchronous_commit=on'] : []),
    ].join(' ');
    await asPostgres(pgCtl, ['-D', servers[which].dataDir, '-o', options, '-l', logFile(which), '-w', '-t', '30', 'start']);
  };

  const query = async <T extends pg.QueryResultRow>(which: 'primary' | 'standby', sql: string, params: unknown[] = [], database = 'postgres') => {
    const client = new pg.Client({ connectionString: servers[which].url(database), connectionTimeoutMillis: 5000 });
    await client.connect();
    try {
      return (await client.query<T>(sql, params)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  const logTail = (which: 'primary' | 'standby', lines = 40) => {
    try {
      return readFileSync(logFile(which), 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  };

  const isRunning = async (which: 'primary' | 'standby') => {
    try {
      await asPostgres(pgCtl, ['-D', servers[which].dataDir, 'status']);
      return true;
    } catch {
      return false;
    }
  };

  const replication: PostgresReplication = {
    primary,
    standby,
    startupMs: 0,
    multiHostUrl(database, order = ['primary', 'standby']) {
      return `postgres://postgres@${order.map((which) => servers[which].address).join(',')}/${database}?target_session_attrs=read-write`;
    },
    async createDatabase(name) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      await query('primary', `create database ${name}`);
      const deadline = Date.now() + 15_000;
      while ((await query('standby', 'select 1 from pg_database where datname = $1', [name])).length === 0) {
        if (Date.now() > deadline) throw new Error(`database ${name} did not reach the standby within 15 s`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return replication.multiHostUrl(name);
    },
    query,
    async inRecovery(which) {
      const [row] = await query<{ recovery: boolean }>(which, 'select pg_is_in_recovery() as recovery');
      return row!.recovery;
    },
    async syncState() {
      const [row] = await query<{ sync_state: string }>('primary', 'select sync_state from pg_stat_replication');
      return row?.sync_state;
    },
    async killPrimary() {
      const pid = postmasterPid('primary');
      killTree('primary');
      if (pid === undefined) return;
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      throw new Error(`the primary's postmaster ${pid} survived SIGKILL`);
    },
    async promoteStandby() {
      await asPostgres(pgCtl, ['-D', standby.dataDir, '-w', '-t', '30', 'promote']);
      const deadline = Date.now() + 30_000;
      while (await replication.inRecovery('standby')) {
        if (Date.now() > deadline) throw new Error(`the standby is still in recovery 30 s after pg_ctl promote; its log ends:\n${logTail('standby')}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    isRunning,
    logTail,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const which of ['standby', 'primary'] as const) {
        if (await isRunning(which)) await asPostgres(pgCtl, ['-D', servers[which].dataDir, '-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => killTree(which));
      }
      process.off('exit', onExit);
      rmSync(root, { recursive: true, force: true });
    },
  };

  try {
    await asPostgres(join(PG_BIN, 'initdb'), ['-D', primary.dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    await start('primary');
    // -R: standby.signal and primary_conninfo; -X stream: the WAL written meanwhile too;
    // -C -S: a replication slot, so the primary keeps WAL the standby has not received.
    await asPostgres(join(PG_BIN, 'pg_basebackup'), [
      '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres',
      '-D', standby.dataDir, '-R', '-X', 'stream', '-C', '-S', 'standby', '-c', 'fast', '--no-sync',
    ]);
    await start('standby');
    const deadline = Date.now() + 30_000;
    while ((await replication.syncState()) !== 'sync') {
      if (Date.now() > deadline) {
        throw new Error(`the standby is not a synchronous standby 30 s after it started; its log ends:\n${logTail('standby')}\nprimary log:\n${logTail('primary')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (error) {
    await replication.destroy();
    throw error;
  }
  replication.startupMs = Date.now() - began;
  return replication;
}
