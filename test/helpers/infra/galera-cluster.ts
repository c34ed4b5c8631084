// A private, throw-away 3-node MariaDB Galera cluster on one machine, for tests that need a
// multi-master store: every node its own data directory, MySQL port, socket, Galera group
// port (gmcast), IST and SST ports, all on free ports in a temporary directory. Tests kill
// nodes (SIGKILL, like a crashed host) and restart them (they rejoin by IST or rsync SST).
//
// Startup, fast (~7 s for 3 nodes on 2 cores): mariadb-install-db once; that data directory
// is bootstrapped once as a one-node cluster and shut down cleanly, so InnoDB and
// grastate.dat hold the same Galera position (uuid:seqno); the three nodes start from copies
// of it, node 1 with --wsrep-new-cluster, the others join with only node 1 in their
// wsrep_cluster_address (two joiners that each list the other flap for ~8 s before they
// agree) and need nothing but a short IST. Readiness is a query: wsrep_local_state_comment =
// Synced, wsrep_cluster_status = Primary and the expected wsrep_cluster_size on every node.
//
// `--no-defaults`: the system /etc/mysql configuration (the shared server on 3306) is never
// read. As root, mariadbd runs as the `mysql` user (the rsync SST daemon would otherwise
// run as `nobody` and be refused the root-owned data directories).
//
// Binaries: TEST_MARIADBD (default /usr/sbin/mariadbd), TEST_MARIADB_INSTALL_DB
// (mariadb-install-db on PATH), TEST_GALERA_PROVIDER (default /usr/lib/galera/libgalera_smm.so),
// rsync and wsrep_sst_rsync on PATH. Missing ones: describeIf('galera-binaries') skips the suite
// (requirements.ts).
import { accessSync, constants, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConnection, type Connection, type RowDataPacket } from 'mysql2/promise';
import { freePort } from './free-port.js';
import { IS_ROOT, assertPlainDatabaseName, logTail as fileTail, makeOwnedDir, makeScratchDir, missingTools, pollUntil, resolveExecutable, runTool, spawnServer, systemUserIds, type ServerProcess } from './server-process.js';

export const MARIADBD = process.env.TEST_MARIADBD ?? '/usr/sbin/mariadbd';
export const MARIADB_INSTALL_DB = process.env.TEST_MARIADB_INSTALL_DB ?? 'mariadb-install-db';
export const GALERA_PROVIDER = process.env.TEST_GALERA_PROVIDER ?? '/usr/lib/galera/libgalera_smm.so';
/** TEST_GALERA_DEBUG=1 prints how long each startup step took. */
const DEBUG = process.env.TEST_GALERA_DEBUG === '1';
/** How long one node may take to start (or rejoin) and report Synced. */
const NODE_START_TIMEOUT_MS = 60_000;

/** Undefined when a private Galera cluster can be made here, else why not. */
export function privateGaleraUnavailable(): string | undefined {
  const tools = [[MARIADBD, 'set TEST_MARIADBD'], [MARIADB_INSTALL_DB, 'set TEST_MARIADB_INSTALL_DB'], ['rsync', 'set PATH'], ['wsrep_sst_rsync', 'set PATH']] as const;
  const missing = missingTools(tools, 'mysql');
  if (missing !== undefined) return missing;
  try {
    accessSync(GALERA_PROVIDER, constants.R_OK);
    return undefined;
  } catch {
    return `${GALERA_PROVIDER} not found (set TEST_GALERA_PROVIDER to libgalera_smm.so)`;
  }
}

export interface GaleraNode {
  /** 0-based position in `cluster.nodes`. */
  index: number;
  /** wsrep_node_name: galera1, galera2, … */
  name: string;
  /** MySQL port (stays the same across restarts). */
  port: number;
  /** `127.0.0.1:<port>`, as it appears in a multi-host DB_URL and in book_store_node_in_use. */
  address: string;
  /** DB_URL of `database` on this node only (user root, no password). */
  url(database: string): string;
  /** True while the node's mariadbd process runs. */
  running(): boolean;
}

export interface GaleraStatus {
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, Joined, Initialized… */
  state: string;
  /** wsrep_cluster_status: Primary, non-Primary, Disconnected. */
  clusterStatus: string;
  clusterSize: number;
  ready: boolean;
}

export interface PrivateGalera {
  nodes: readonly GaleraNode[];
  /** Milliseconds `startPrivateGalera` took, install included. */
  startupMs: number;
  /**
   * One DB_URL listing several nodes: `mysql://root@127.0.0.1:p1,127.0.0.1:p2,…/database`,
   * in the order given (node indexes; default every node in index order).
   */
  multiHostUrl(database: string, order?: readonly number[]): string;
  /** SIGKILLs the node's mariadbd (a crashed host) and waits until the process is gone. */
  kill(node: number | GaleraNode): Promise<void>;
  /**
   * Starts a killed node again on the same MySQL port; it rejoins (IST or rsync SST) and this
   * resolves once every running node is Synced in a Primary cluster of all running nodes.
   */
  restart(node: number | GaleraNode): Promise<void>;
  /** Waits until every running node reports Synced, Primary and the running node count. */
  waitUntilSynced(timeoutMs?: number): Promise<void>;
  /**
   * When no running node is in a primary component any more (the survivors of a kill, each
   * seeing the others as gone under load), bootstraps it again on the running node that
   * committed the most (`pc.bootstrap=YES`, what an operator does): true if it did.
   */
  restorePrimary(): Promise<boolean>;
  /** wsrep status of one running node. */
  status(node: number | GaleraNode): Promise<GaleraStatus>;
  /** Runs one statement on a running node (fresh connection, `database` optional) and returns its rows. */
  query<T = RowDataPacket>(node: number | GaleraNode, sql: string, params?: unknown[], database?: string): Promise<T[]>;
  /** Creates a database (replicated to every node) and returns the multi-host DB_URL for it. */
  createDatabase(name: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** The last `lines` lines of the node's error log (for failure messages). */
  logTail(node: number | GaleraNode, lines?: number): string;
  /** SIGKILLs every node and deletes every file. Safe to call twice; also runs on process exit. */
  destroy(): Promise<void>;
}

interface NodeState extends GaleraNode {
  dataDir: string;
  socket: string;
  pidFile: string;
  errorLog: string;
  gmcastPort: number;
  /** The node's latest mariadbd, running or not. */
  server: ServerProcess | undefined;
}

export interface PrivateGaleraOptions {
  /** Node count (default 3). */
  size?: number;
  /** Extra mariadbd options for every node, e.g. `--max-connections=300`. */
  extraArgs?: string[];
  /** Called once the ports are chosen, before anything starts (to hand them out early). */
  onNodes?: (nodes: readonly GaleraNode[]) => void;
}

/** Starts a new cluster of `size` nodes (default 3) and resolves once all are Synced. */
export async function startPrivateGalera(options: PrivateGaleraOptions = {}): Promise<PrivateGalera> {
  const reason = privateGaleraUnavailable();
  if (reason !== undefined) throw new Error(`cannot start a private Galera cluster: ${reason}`);
  const began = Date.now();
  const size = options.size ?? 3;
  const owner = IS_ROOT ? systemUserIds('mysql') : undefined;
  const nodes: NodeState[] = [];
  // On process exit: SIGKILL every node (they keep files open in the directory).
  const root = makeScratchDir('books-galera-', owner, () => nodes.forEach((node) => void node.server?.kill('SIGKILL')));
  const seedDir = join(root.path, 'seed');
  // Temporary tables in a directory of the cluster's own, never the shared /tmp: two clusters
  // bootstrapping at once there (the global setup's and a test file's) clashed on one file.
  const tempDirOf = (name: string) => makeOwnedDir(join(root.path, `${name}.tmp`), owner);
  let destroyed = false;
  const step = (what: string) => {
    if (DEBUG) console.info(`[galera +${Date.now() - began} ms] ${what}`);
  };

  for (let index = 0; index < size; index++) {
    const port = await freePort();
    const name = `galera${index + 1}`;
    nodes.push({
      index,
      name,
      port,
      address: `127.0.0.1:${port}`,
      url: (database: string) => `mysql://root@127.0.0.1:${port}/${database}`,
      running: () => nodes[index]!.server?.running() ?? false,
      dataDir: join(root.path, name),
      socket: join(root.path, `${name}.sock`),
      pidFile: join(root.path, `${name}.pid`),
      errorLog: join(root.path, `${name}.err`),
      gmcastPort: await freePort(),
      server: undefined,
    });
  }
  options.onNodes?.(nodes);
  const clusterAddress = (peers: NodeState[]) => `gcomm://${peers.map((peer) => `127.0.0.1:${peer.gmcastPort}`).join(',')}`;

  const resolveNode = (node: number | GaleraNode): NodeState => {
    const state = nodes[typeof node === 'number' ? node : node.index];
    if (!state) throw new Error(`no Galera node ${typeof node === 'number' ? node : node.name}`);
    return state;
  };

  const logTail = (node: number | GaleraNode, lines = 40) =>
    fileTail(resolveNode(node).errorLog, lines, /Could not increase number of max_open_files|makes it impossible for another host to reach/);

  /** Spawns mariadbd for `node` (not waiting for anything). */
  const spawnNode = async (node: NodeState, clusterAddr: string, bootstrap: boolean) => {
    // IST and SST ports fresh on every start: a killed joiner's rsync daemon may linger a moment.
    const istPort = await freePort();
    const sstPort = await freePort();
    const args = [
      '--no-defaults',
      ...(owner ? ['--user=mysql'] : []),
      `--datadir=${node.dataDir}`,
      `--tmpdir=${tempDirOf(node.name)}`,
      `--port=${node.port}`,
      '--bind-address=127.0.0.1',
      `--socket=${node.socket}`,
      `--pid-file=${node.pidFile}`,
      `--log-error=${node.errorLog}`,
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=8M',
      // Throw-away data: no fsync per commit. An acknowledged commit is on every node of the
      // cluster in memory (Galera replicates before it acknowledges), which is what the tests check.
      '--innodb-flush-log-at-trx-commit=0',
      '--performance-schema=OFF',
      '--skip-name-resolve',
      '--max-connections=300',
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      '--default-storage-engine=InnoDB',
      '--wsrep-on=ON',
      `--wsrep-provider=${GALERA_PROVIDER}`,
      `--wsrep-cluster-address=${clusterAddr}`,
      '--wsrep-cluster-name=books_test',
      '--wsrep-node-address=127.0.0.1',
      `--wsrep-node-name=${node.name}`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${sstPort}`,
      `--wsrep-provider-options=${[
        `gmcast.listen_addr=tcp://127.0.0.1:${node.gmcastPort}`,
        `base_port=${node.gmcastPort}`,
        `ist.recv_addr=127.0.0.1:${istPort}`,
        'gcache.size=32M',
        // A SIGKILLed node closes its sockets at once, but the others only evict it after
        // suspect_timeout (default 5 s), during which commits on them wait. Shorter here.
        'evs.suspect_timeout=PT3S',
        'evs.inactive_timeout=PT6S',
      ].join(';')}`,
      ...(bootstrap ? ['--wsrep-new-cluster'] : []),
      ...(options.extraArgs ?? []),
    ];
    node.server = spawnServer(MARIADBD, args);
  };

  /** Runs `work` on a fresh connection to the node (`database` optional), closed afterwards. */
  const withConnection = async <T>(node: NodeState, database: string | undefined, work: (connection: Connection) => Promise<T>) => {
    const connection = await createConnection({ host: '127.0.0.1', port: node.port, user: 'root', database, connectTimeout: 3000 });
    try {
      return await work(connection);
    } finally {
      await connection.end().catch(() => undefined);
    }
  };

  const readStatus = async (connection: Connection): Promise<GaleraStatus> => {
    const [rows] = await connection.query<RowDataPacket[]>(
      "show global status where Variable_name in ('wsrep_local_state_comment', 'wsrep_cluster_status', 'wsrep_cluster_size', 'wsrep_ready')",
    );
    const value = (name: string) => String(rows.find((row) => String(row.Variable_name) === name)?.Value ?? '');
    return {
      state: value('wsrep_local_state_comment'),
      clusterStatus: value('wsrep_cluster_status'),
      clusterSize: Number(value('wsrep_cluster_size')),
      ready: value('wsrep_ready') === 'ON',
    };
  };

  /** Polls the node until it is Synced in a Primary component of `expectedSize`; throws with its log tail otherwise. */
  const waitForNode = async (node: NodeState, expectedSize: number, timeoutMs = NODE_START_TIMEOUT_MS) => {
    let last = 'no answer yet';
    const synced = async () => {
      if (!node.running()) throw new Error(`Galera node ${node.name} (port ${node.port}) exited while starting; its error log ends:\n${logTail(node)}`);
      try {
        const status = await withConnection(node, undefined, readStatus);
        last = JSON.stringify(status);
        return status.state === 'Synced' && status.clusterStatus === 'Primary' && status.clusterSize === expectedSize && status.ready;
      } catch (error) {
        last = (error as Error).message;
        return false;
      }
    };
    await pollUntil(synced, timeoutMs, 100, () =>
      `Galera node ${node.name} (port ${node.port}) not Synced in a cluster of ${expectedSize} within ${timeoutMs} ms (last: ${last}); its error log ends:\n${logTail(node)}`);
  };

  const running = () => nodes.filter((node) => node.running());

  const cluster: PrivateGalera = {
    nodes,
    startupMs: 0,
    multiHostUrl(database, order = nodes.map((node) => node.index)) {
      return `mysql://root@${order.map((index) => resolveNode(index).address).join(',')}/${database}`;
    },
    async kill(node) {
      await resolveNode(node).server?.kill('SIGKILL');
    },
    async restart(node) {
      const state = resolveNode(node);
      if (state.running()) throw new Error(`Galera node ${state.name} is running; kill it first`);
      const peers = running();
      if (peers.length === 0) throw new Error(`no running Galera node for ${state.name} to rejoin`);
      // A killed node cannot be the one to bootstrap; it must join the running ones.
      makeJoiner(state.dataDir);
      await spawnNode(state, clusterAddress(peers), false);
      await cluster.waitUntilSynced();
    },
    async waitUntilSynced(timeoutMs = NODE_START_TIMEOUT_MS) {
      const live = running();
      await Promise.all(live.map((node) => waitForNode(node, live.length, timeoutMs)));
    },
    async restorePrimary() {
      const live = running();
      const statuses = await Promise.all(
        live.map((node) =>
          withConnection(node, undefined, async (connection) => {
            const status = await readStatus(connection);
            const [rows] = await connection.query<RowDataPacket[]>("show global status like 'wsrep_last_committed'");
            return { node, primary: status.clusterStatus === 'Primary', committed: Number(rows[0]?.Value ?? -1) };
          }).catch(() => undefined),
        ),
      );
      const reachable = statuses.filter((status) => status !== undefined);
      if (reachable.length === 0 || reachable.some((status) => status.primary)) return false;
      const mostAdvanced = reachable.reduce((best, status) => (status.committed > best.committed ? status : best));
      await withConnection(mostAdvanced.node, undefined, (connection) => connection.query("set global wsrep_provider_options = 'pc.bootstrap=YES'"));
      return true;
    },
    status: (node) => withConnection(resolveNode(node), undefined, readStatus),
    query: <T>(node: number | GaleraNode, sql: string, params: unknown[] = [], database?: string) =>
      withConnection(resolveNode(node), database, async (connection) => (await connection.query(sql, params))[0] as T[]),
    async createDatabase(name) {
      assertPlainDatabaseName(name);
      const [first] = running();
      if (!first) throw new Error('no running Galera node');
      await cluster.query(first, `create database ${name}`);
      return cluster.multiHostUrl(name);
    },
    async dropDatabase(name) {
      assertPlainDatabaseName(name);
      const [first] = running();
      if (!first) return;
      await cluster.query(first, `drop database if exists ${name}`);
    },
    logTail,
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      await Promise.all(nodes.map((node) => node.server?.kill('SIGKILL')));
      root.remove();
    },
  };

  try {
    // 1. System tables.
    await runTool(resolveExecutable(MARIADB_INSTALL_DB)!, [
      '--no-defaults',
      `--datadir=${seedDir}`,
      `--tmpdir=${tempDirOf('seed')}`,
      ...(owner ? ['--user=mysql'] : []),
      '--auth-root-authentication-method=normal',
      '--skip-test-db',
      '--innodb-log-file-size=8M',
      '--innodb-buffer-pool-size=32M',
    ]);
    step('installed');
    // 2. Bootstrap the seed once as a one-node cluster and stop it cleanly: InnoDB and
    // grastate.dat then agree on a Galera position, so copies join by IST, not a full SST.
    const [first] = nodes as [NodeState, ...NodeState[]];
    await copyTree(seedDir, first.dataDir);
    await spawnNode(first, clusterAddress(nodes), true);
    await waitForNode(first, 1);
    step('seed Synced');
    await first.server?.stop(30_000);
    step('seed stopped');
    rmSync(join(first.dataDir, 'gvwstate.dat'), { force: true });
    for (const node of nodes.slice(1)) {
      await copyTree(first.dataDir, node.dataDir);
      makeJoiner(node.dataDir);
    }
    rmSync(seedDir, { recursive: true, force: true });

    step('copies made');
    // 3. Node 1 founds the cluster; the others join it together, each naming only node 1.
    await spawnNode(first, clusterAddress(nodes), true);
    await waitForNode(first, 1);
    step('node 1 Synced');
    for (const node of nodes.slice(1)) await spawnNode(node, clusterAddress([first]), false);
    await cluster.waitUntilSynced();
    step('all Synced');
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  cluster.startupMs = Date.now() - began;
  return cluster;
}

/** `cp -a`: a data directory with its owner (mysql) and modes kept. */
async function copyTree(from: string, to: string) {
  await runTool('cp', ['-a', from, to]);
}

/** Makes a data directory join a running cluster on its next start: never bootstrap one of its own. */
function makeJoiner(dataDir: string) {
  const grastate = join(dataDir, 'grastate.dat');
  if (existsSync(grastate)) writeFileSync(grastate, readFileSync(grastate, 'utf8').replace(/safe_to_bootstrap: 1/, 'safe_to_bootstrap: 0'));
  rmSync(join(dataDir, 'gvwstate.dat'), { force: true });
}
