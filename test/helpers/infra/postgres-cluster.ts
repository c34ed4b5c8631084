// A private, throw-away PostgreSQL cluster that a test creates, starts, stops and restarts
// at will (outages, late starts), unlike the shared server the contract suites use.
// initdb refuses to run as root, so when the tests run as root the cluster belongs to the
// `postgres` user and every command runs through `runuser -u postgres`.
// Binaries: TEST_PG_BIN (default /usr/lib/postgresql/15/bin). Missing binaries:
// describeIf('pg-binaries') skips the suite (requirements.ts).
import { execFile } from 'node:child_process';
import { accessSync, chownSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

export const PG_BIN = process.env.TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';
const RUNUSER = '/usr/sbin/runuser';
export const IS_ROOT = process.getuid?.() === 0;

/** Undefined when a private cluster can be made here, else why not. */
export function privatePostgresUnavailable(): string | undefined {
  for (const tool of ['initdb', 'pg_ctl', 'postgres']) {
    try {
      accessSync(join(PG_BIN, tool), constants.X_OK);
    } catch {
      return `${join(PG_BIN, tool)} not found (set TEST_PG_BIN to the PostgreSQL bin directory)`;
    }
  }
  if (IS_ROOT) {
    try {
      accessSync(RUNUSER, constants.X_OK);
    } catch {
      return `running as root and ${RUNUSER} is missing (initdb refuses root; it must run as postgres)`;
    }
    try {
      userIds();
    } catch (error) {
      return (error as Error).message;
    }
  }
  return undefined;
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

/** Runs a PostgreSQL tool, as the `postgres` user when the tests run as root. */
export async function asPostgres(command: string, args: string[], timeoutMs = 60_000) {
  const [file, argv] = IS_ROOT ? [RUNUSER, ['-u', 'postgres', '--', command, ...args]] : [command, args];
  try {
    return await run(file, argv, { timeout: timeoutMs, env: { PATH: process.env.PATH ?? '', LC_ALL: 'C' } });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`, {
      cause: error,
    });
  }
}

/** initdb a new cluster on a free port (not started). */
export async function createPrivatePostgres(): Promise<PrivatePostgres> {
  const root = mkdtempSync(join(tmpdir(), 'books-pg-'));
  const dataDir = join(root, 'data');
  if (IS_ROOT) {
    const { uid, gid } = userIds();
    chownSync(root, uid, gid);
  }
  const port = await freePort();
  const pgCtl = join(PG_BIN, 'pg_ctl');
  const logFile = join(root, 'server.log');
  let destroyed = false;
  let frozen: number[] = [];

  await asPostgres(join(PG_BIN, 'initdb'), ['-D', dataDir, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);

  const cluster: PrivatePostgres = {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    dataDir,
    async start() {
      // Unix socket in our own directory (the default /var/run/postgresql may not be ours);
      // fsync off: this cluster is thrown away, and the tests here are about outages, not disks.
      const options = `-p ${port} -k ${root} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
      await asPostgres(pgCtl, ['-D', dataDir, '-o', options, '-l', logFile, '-w', '-t', '30', 'start']);
    },
    async stop(mode = 'fast') {
      await asPostgres(pgCtl, ['-D', dataDir, '-m', mode, '-w', '-t', '30', 'stop']);
    },
    async isRunning() {
      try {
        await asPostgres(pgCtl, ['-D', dataDir, 'status']);
        return true;
      } catch {
        return false;
      }
    },
    async freeze() {
      const postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      // The postmaster first, so it forks no backend after its children are listed (a backend
      // forked in between kept answering through a whole "hang" once, seen in CI). Then its
      // children, listed again until each one shows as stopped (signals arrive asynchronously).
      process.kill(postmaster, 'SIGSTOP');
      frozen = [postmaster];
      const deadline = Date.now() + 5000;
      for (;;) {
        const running = [postmaster, ...childrenOf(postmaster)].filter((pid) => !isStopped(pid));
        if (running.length === 0) return;
        if (Date.now() > deadline) throw new Error(`freeze: processes ${running.join(', ')} still run after 5 s`);
        for (const pid of running) {
          process.kill(pid, 'SIGSTOP');
          if (!frozen.includes(pid)) frozen.push(pid);
        }
        await sleep(10);
      }
    },
    thaw() {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // already gone
        }
      }
      frozen = [];
    },
    async createDatabase(name: string) {
      if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
      const client = new pg.Client({ connectionString: cluster.url, connectionTimeoutMillis: 5000 });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      cluster.thaw();
      if (await cluster.isRunning()) await cluster.stop('immediate').catch(() => undefined);
      rmSync(root, { recursive: true, force: true });
    },
  };
  return cluster;
}

/** Pids of the direct children of `parent` (the postmaster's backends and helpers), from /proc. */
export function childrenOf(parent: number): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]) === parent) pids.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
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

/** uid and gid of the `postgres` user, from /etc/passwd. */
export function userIds(): { uid: number; gid: number } {
  const fields = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith('postgres:'))
    ?.split(':');
  if (!fields || fields.length < 4) throw new Error('no postgres user in /etc/passwd: cannot run initdb as root');
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}
