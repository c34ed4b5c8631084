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
import type pg from 'pg';
import { freePort } from './free-port.js';
import { clusterOwner, pgDataDir, pgTool, privatePostgresUnavailable, queryOnce } from './postgres-cluster.js';
import { assertPlainDatabaseName, childrenOf, logTail as fileTail, makeScratchDir, pollUntil, processExists, signalAll } from './server-process.js';

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
  const ports = { primary: await freePort(), standby: await freePort() };
  const root = makeScratchDir('books-pg-repl-', clusterOwner(), () => {
    killTree('primary');
    killTree('standby');
  });
  const ctl = { primary: pgDataDir(root.path, 'primary', ports.primary), standby: pgDataDir(root.path, 'standby', ports.standby) };
  const server = (name: 'primary' | 'standby'): PostgresServer => ({
    name,
    port: ports[name],
    address: `127.0.0.1:${ports[name]}`,
    dataDir: ctl[name].dataDir,
    url: (database: string) => `postgres://postgres@127.0.0.1:${ports[name]}/${database}`,
  });
  const servers = { primary: server('primary'), standby: server('standby') };
  const { primary, standby } = servers;
  let destroyed = false;

  /** SIGKILL to the server's postmaster and every one of its processes, at once (a crash). */
  function killTree(which: 'primary' | 'standby') {
    const pid = ctl[which].postmasterPid();
    if (pid !== undefined) signalAll([pid, ...childrenOf(pid)], 'SIGKILL');
  }
  const query = <T extends pg.QueryResultRow>(which: 'primary' | 'standby', sql: string, params: unknown[] = [], database = 'postgres') =>
    queryOnce<T>(servers[which].url(database), sql, params);
  const logTail = (which: 'primary' | 'standby', lines = 40) => fileTail(ctl[which].logFile, lines);
  const isRunning = (which: 'primary' | 'standby') => ctl[which].isRunning();

  const start = (which: 'primary' | 'standby') =>
    ctl[which].start([
      '-c wal_level=replica',
      '-c max_wal_senders=5',
      '-c hot_standby=on',
      '-c wal_keep_size=64MB',
      '-c cluster_name=' + which,
      ...(which === 'primary' ? ["-c synchronous_standby_names='*'", '-c synchronous_commit=on'] : []),
    ]);

  const replication: PostgresReplication = {
    primary,
    standby,
    startupMs: 0,
    multiHostUrl(database, order = ['primary', 'standby']) {
      return `postgres://postgres@${order.map((which) => servers[which].address).join(',')}/${database}?target_session_attrs=read-write`;
    },
    async createDatabase(name) {
      assertPlainDatabaseName(name);
      await query('primary', `create database ${name}`);
      const onStandby = async () => (await query('standby', 'select 1 from pg_database where datname = $1', [name])).length > 0;
      await pollUntil(onStandby, 15_000, 50, () => `database ${name} did not reach the standby within 15 s`);
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
      const pid = ctl.primary.postmasterPid();
      killTree('primary');
      if (pid === undefined) return;
      await pollUntil(() => !processExists(pid), 10_000, 20, () => `the primary's postmaster ${pid} survived SIGKILL`);
    },
    async promoteStandby() {
      await ctl.standby.promote();
      const promoted = async () => !(await replication.inRecovery('standby'));
      await pollUntil(promoted, 30_000, 50, () => `the standby is still in recovery 30 s after pg_ctl promote; its log ends:\n${logTail('standby')}`);
    },
    isRunning,
    logTail,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const which of ['standby', 'primary'] as const) {
        if (await isRunning(which)) await ctl[which].stop('immediate').catch(() => killTree(which));
      }
      root.remove();
    },
  };

  try {
    await ctl.primary.initdb();
    await start('primary');
    // -R: standby.signal and primary_conninfo; -X stream: the WAL written meanwhile too;
    // -C -S: a replication slot, so the primary keeps WAL the standby has not received.
    await pgTool('pg_basebackup', [
      '-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres',
      '-D', standby.dataDir, '-R', '-X', 'stream', '-C', '-S', 'standby', '-c', 'fast', '--no-sync',
    ]);
    await start('standby');
    await pollUntil(async () => (await replication.syncState()) === 'sync', 30_000, 50, () =>
      `the standby is not a synchronous standby 30 s after it started; its log ends:\n${logTail('standby')}\nprimary log:\n${logTail('primary')}`);
  } catch (error) {
    await replication.destroy();
    throw error;
  }
  replication.startupMs = Date.now() - began;
  return replication;
}
