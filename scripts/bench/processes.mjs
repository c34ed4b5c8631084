// Starting the servers under test and watching them: the service (`node dist/main.js`, as
// `npm start` runs it) and the bare node:http baseline, spawned with the service's own settings
// stripped from the environment, polled until they answer 200, and checked to be still alive.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { checkAborted, isRunning, track } from './children.mjs';
import { freePort, request } from './client.mjs';
import { CREDENTIALS_BODY, MAIN_JS, SERVICE_SETTINGS } from './settings.mjs';

const BASELINE_SERVER = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));

/** The bench's environment without the service's settings, plus `extra`. */
export function childEnv(extra) {
  const env = { ...process.env };
  for (const name of SERVICE_SETTINGS) delete env[name];
  return { ...env, ...extra };
}

/** `command args`, or `taskset -c cpu command args` (taskset execs it: same pid) when pinned. */
export function pinned(cpu, command, args) {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', cpu, command, ...args]];
}

/** A tracked child whose stdout and stderr are appended to `logFile`; pinned to `cpu` if given. */
export function spawnLogged(command, args, { cwd, env, logFile, cpu }) {
  checkAborted();
  const fd = openSync(logFile, 'a');
  try {
    return track(spawn(...pinned(cpu, command, args), { cwd, env, stdio: ['ignore', fd, fd] }));
  } finally {
    closeSync(fd);
  }
}

export function tailOf(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/**
 * `node dist/main.js`, as `npm start` runs it, from a scratch working directory (so no stray
 * .env is read); stdout/stderr appended to the store's log file. `workers` (BENCH_WORKERS) is
 * the service's WORKERS setting (undefined = its default); `fastPaths`, its FAST_PATHS
 * (undefined = its default, every speed path on).
 */
function spawnService(store, port, workDir, workers, cpu, fastPaths) {
  return spawnLogged(process.execPath, [MAIN_JS], {
    cwd: workDir,
    cpu,
    env: childEnv({
      SECRET_TOKEN: store.secret,
      PORT: String(port),
      DB_URL: store.url,
      ...(workers === undefined ? {} : { WORKERS: String(workers) }),
      ...(fastPaths === undefined ? {} : { FAST_PATHS: fastPaths }),
    }),
    logFile: store.logFile,
  });
}

/** The node:http baseline; with `postgresUrl`, the node:http + pg floor reading that database. */
export function spawnBaseline(port, cpu, postgresUrl) {
  checkAborted();
  const args = [BASELINE_SERVER, String(port), ...(postgresUrl ? [postgresUrl] : [])];
  const child = spawn(...pinned(cpu, process.execPath, args), {
    env: childEnv({}),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return track(child);
}

/** Polls until the process gives a 200; returns ms since `startedAt`. */
export async function waitForAnswer(child, port, startedAt, { method, path, body, what, logFile }) {
  const deadline = startedAt + 60_000;
  for (;;) {
    checkAborted();
    if (!isRunning(child)) {
      const { code, signal } = await child.exited;
      throw new Error(`${what} exited (${signal ?? code}) before answering${logFile ? `:\n${tailOf(logFile)}` : ''}`);
    }
    try {
      const response = await request(port, method, path, { body, timeoutMs: 5_000 });
      if (response.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${what} gave no 200 within 60 s`);
    await sleep(5);
  }
}

/** A service that exited while the bench still needed it: say so, with its last own words. */
export function assertAlive(child, store) {
  if (isRunning(child) || child.stopping) return;
  const ownLines = tailOf(store.logFile, 2000)
    .split('\n')
    .filter((line) => line.includes(`"pid":${child.pid},`) && !line.includes('"msg":"request completed"'))
    .slice(-5)
    .join('\n');
  throw new Error(
    `the ${store.label} service (pid ${child.pid}) exited (${child.signalCode ?? `code ${child.exitCode}`}) ` +
      `although the bench did not stop it; its last log lines:\n${ownLines}`,
  );
}

/**
 * Starts the service on `store` (pinned to `cpu` if given; with FAST_PATHS=`fastPaths` if given)
 * and waits for its first 200; returns { child, port, startupMs }. `store` needs only its
 * label, logFile, secret and url.
 */
export async function startService(store, workDir, workers, cpu, fastPaths) {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawnService(store, port, workDir, workers, cpu, fastPaths);
  const ms = await waitForAnswer(child, port, startedAt, {
    method: 'POST',
    path: '/token',
    body: CREDENTIALS_BODY,
    what: `the service (${store.label})`,
    logFile: store.logFile,
  });
  return { child, port, startupMs: ms };
}
