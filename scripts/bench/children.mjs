// Children and cleanup: every child process the bench starts is tracked and can be stopped
// (SIGTERM, then SIGKILL); on success, on failure and on Ctrl-C every child is killed, the
// databases dropped and the temp dirs removed (cleanup tasks run last registered first).
import { spawn } from 'node:child_process';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from './log.mjs';

const children = new Set();
const cleanups = [];
let aborted = false;
let cleaning;

/** True once a signal asked the bench to stop. */
export function isAborted() {
  return aborted;
}

export function checkAborted() {
  if (aborted) throw new Error('interrupted');
}

/** Registers a task for cleanup(). */
export function onCleanup(task) {
  cleanups.push(task);
}

/** Tracks a spawned child; `child.exited` resolves with { code, signal, error } once it is gone. */
export function track(child) {
  children.add(child);
  child.exited = new Promise((resolvePromise) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolvePromise({ code, signal });
    });
    child.once('error', (error) => {
      children.delete(child);
      resolvePromise({ code: null, signal: null, error });
    });
  });
  return child;
}

export function isRunning(child) {
  return child.exitCode === null && child.signalCode === null && children.has(child);
}

export async function stopChild(child, graceMs = 10_000) {
  if (!isRunning(child)) return child.exited;
  child.stopping = true;
  child.kill('SIGTERM');
  const timer = sleep(graceMs).then(() => 'timeout');
  if ((await Promise.race([child.exited, timer])) === 'timeout') {
    child.kill('SIGKILL');
  }
  return child.exited;
}

/** Runs a command to its end; resolves with its output, rejects when it fails. */
export function runProcess(command, args, env, { cwd } = {}) {
  checkAborted();
  return new Promise((resolvePromise, reject) => {
    const child = track(spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.exited.then(({ code, signal, error }) => {
      if (error) return reject(error);
      if (aborted) return reject(new Error('interrupted'));
      if (code !== 0) return reject(new Error(`${command} exited with ${signal ?? code}: ${stderr || stdout}`));
      resolvePromise({ stdout, stderr });
    });
  });
}

export function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...children].map((child) => stopChild(child, 5_000)));
    for (const task of cleanups.reverse()) {
      try {
        await task();
      } catch (error) {
        log(`cleanup: ${error.message}`);
      }
    }
  })();
  return cleaning;
}

export function handleSignals() {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (aborted) return;
      aborted = true;
      log(`\n${signal}: stopping children, dropping databases, removing temp dirs…`);
      cleanup().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}
