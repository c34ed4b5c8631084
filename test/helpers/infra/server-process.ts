// What the private server harnesses (PostgreSQL, Galera, Redis) share: running a tool or a
// server as the system user it must belong to when the tests run as root (initdb refuses root;
// mariadbd's rsync SST daemon would run as `nobody`), a temp directory that user owns and that
// goes away even when the test process dies first, following a spawned server's process, and
// polling until a server is ready.
import { execFile, spawn } from 'node:child_process';
import { accessSync, chownSync, constants, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const IS_ROOT = process.getuid?.() === 0;
export const RUNUSER = '/usr/sbin/runuser';
// Servers and tools see only PATH and the C locale: their output and logs read the same on
// every machine, and nothing of the test runner's environment reaches them.
const SERVER_ENV = { PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };

export type UserIds = { uid: number; gid: number };

/** uid and gid of a system user, from /etc/passwd; undefined if there is none. */
export function systemUserIds(user: string): UserIds | undefined {
  try {
    const fields = readFileSync('/etc/passwd', 'utf8').split('\n').find((entry) => entry.startsWith(`${user}:`))?.split(':');
    return fields && fields.length >= 4 ? { uid: Number(fields[2]), gid: Number(fields[3]) } : undefined;
  } catch {
    return undefined;
  }
}

/** `command` as an absolute path if it is one, else the first match on PATH; undefined if not executable. */
export function resolveExecutable(command: string): string | undefined {
  const candidates = command.includes('/')
    ? [command]
    : (process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, command));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

/**
 * Why a harness cannot run here, else undefined: the first of `tools` ([command or path, how to
 * provide it]) that is not executable, or, when the tests run as root, no `user` to run it as.
 */
export function missingTools(tools: ReadonlyArray<readonly [string, string]>, user: string): string | undefined {
  const missing = tools.find(([tool]) => resolveExecutable(tool) === undefined);
  if (missing) return `${missing[0]} not found (${missing[1]})`;
  return IS_ROOT && systemUserIds(user) === undefined ? `running as root and there is no ${user} user in /etc/passwd to run it as` : undefined;
}

/**
 * Runs a tool to its end, as `asUser` (through runuser) when the tests run as root. Its output
 * is in the error when it fails: initdb and mariadb-install-db say there why.
 */
export async function runTool(command: string, args: string[], { asUser, timeoutMs = 60_000 }: { asUser?: string; timeoutMs?: number } = {}): Promise<void> {
  const [file, argv] = IS_ROOT && asUser !== undefined ? [RUNUSER, ['-u', asUser, '--', command, ...args]] : [command, args];
  try {
    await execFileAsync(file, argv, { timeout: timeoutMs, env: SERVER_ENV });
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`${command} ${args.join(' ')} failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

/** Creates `dir` (and its parents) owned by `owner` when given. */
export function makeOwnedDir(dir: string, owner: UserIds | undefined): string {
  mkdirSync(dir, { recursive: true });
  if (owner) chownSync(dir, owner.uid, owner.gid);
  return dir;
}

/**
 * A new temp directory `<tmpdir>/<prefix>XXXXXX` owned by `owner` when given. With `onExit`, a
 * test process that exits before `remove` first runs `onExit` (synchronous: kill the servers
 * that keep files open there) and then deletes the directory, so a crashed run leaves nothing.
 */
export function makeScratchDir(prefix: string, owner: UserIds | undefined, onExit?: () => void): { path: string; remove(): void } {
  const path = makeOwnedDir(mkdtempSync(join(tmpdir(), prefix)), owner);
  const remove = () => rmSync(path, { recursive: true, force: true });
  const atExit = () => {
    onExit?.();
    remove();
  };
  if (onExit) process.on('exit', atExit);
  return {
    path,
    /** Deletes the directory (and forgets `onExit`). Safe to call twice. */
    remove() {
      process.off('exit', atExit);
      remove();
    },
  };
}

/** Spawns a server in the background; its output is ignored (the servers here log to files of their own). */
export function spawnServer(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: 'ignore', env: SERVER_ENV });
  let running = true;
  // 'error' too: a server that cannot be spawned emits no 'exit', and unheard it would crash the run.
  const exited = new Promise<void>((resolve) => {
    for (const event of ['exit', 'error']) {
      child.once(event, () => {
        running = false;
        resolve();
      });
    }
  });
  /** Sends `signal` at once (no await before it: usable in an exit handler) and resolves once the process has exited. */
  const kill = async (signal: NodeJS.Signals = 'SIGKILL') => {
    if (running) child.kill(signal);
    await exited;
  };
  return {
    running: () => running,
    kill,
    /** SIGTERM, SIGKILL after `graceMs`; resolves once the process has exited. */
    async stop(graceMs: number) {
      const timer = setTimeout(() => void kill('SIGKILL'), graceMs);
      await kill('SIGTERM');
      clearTimeout(timer);
    },
  };
}
export type ServerProcess = ReturnType<typeof spawnServer>;

/**
 * Calls `done` every `intervalMs` until it returns true; past `timeoutMs`, throws an Error with
 * `describeTimeout()`. An error `done` throws ends the wait at once (a server that died).
 */
export async function pollUntil(done: () => boolean | Promise<boolean>, timeoutMs: number, intervalMs: number, describeTimeout: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(describeTimeout());
    await sleep(intervalMs);
  }
}

/** Pids of the direct children of `parent` (a postmaster's backends and helpers), from /proc. */
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

/** Sends `signal` to each process of `pids` at once; gone ones are skipped. */
export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const target of pids) {
    try {
      process.kill(target, signal);
    } catch {
      // already gone
    }
  }
}

/** The last `lines` lines of a server's log file, without those `ignore` matches (noise). */
export function logTail(file: string, lines: number, ignore?: RegExp): string {
  try {
    return readFileSync(file, 'utf8').split('\n').filter((line) => !ignore?.test(line)).slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Throws unless `name` is a plain lower-case SQL identifier: the harnesses put it into SQL unquoted. */
export function assertPlainDatabaseName(name: string): void {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a plain database name: ${name}`);
}

/** Whether a process `pid` exists (signal 0 checks without sending anything). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
