// `npm start` (README "Quick start", docs/operations.md "In production"): it serves from dist/,
// built only when a file the build reads changed (scripts/prestart.mjs; its speed is measured,
// not asserted here), and stop signals reach the service itself: SIGTERM to npm drains and exits
// the service (no orphan left running), and Ctrl-C (SIGINT to the whole process group, so the
// service gets it twice: from the terminal and from npm) is one graceful stop, not a forced one.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MAIN_JS } from '../helpers/service/main-process.js';
import { freePort } from '../helpers/infra/free-port.js';
import { processExists } from '../helpers/infra/server-process.js';
import { TEST_SECRET } from '../helpers/client/test-account.js';

const PROJECT_DIR = fileURLToPath(new URL('../..', import.meta.url));
const workDir = mkdtempSync(join(tmpdir(), 'books-npm-start-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** `npm start` in its own process group, as a terminal runs it; resolves once the service answers. */
async function npmStart() {
  const port = await freePort();
  const child = spawn('npm', ['--prefix', PROJECT_DIR, 'start'], {
    cwd: workDir,
    detached: true, // its own process group, so a test can signal the group as Ctrl-C does
    env: { ...process.env, SECRET_TOKEN: TEST_SECRET, DB_URL: 'sqlite::memory:', PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output}`);
    if (Date.now() > deadline) throw new Error(`npm start did not answer: ${output}`);
    const answered = await fetch(`${baseUrl}/healthz`).then((response) => response.ok, () => false);
    if (answered) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  /** The pid of the service process, from its own log line. */
  const servicePid = Number(/"pid":(\d+).*"msg":"book service ready"/.exec(output)?.[1]);
  return { child, exited, output: () => output, servicePid };
}

describe('npm start', () => {
  it('starts the built service and leaves an up-to-date dist/ untouched', async () => {
    const before = statSync(MAIN_JS).mtimeMs;
    const started = await npmStart();
    expect(statSync(MAIN_JS).mtimeMs).toBe(before);
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
  }, 60_000);

  it('a second start builds nothing (dist/.build-inputs matches); a file of src/ touched since: it builds', async () => {
    const first = await npmStart();
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const second = await npmStart();
    expect(second.output()).not.toMatch(/^npm start: .*building$/m);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    // The same content, a newer time: the inputs differ, so the build runs (and writes nothing new).
    const touched = join(PROJECT_DIR, 'src', 'version.ts');
    const { atime, mtime } = statSync(touched);
    utimesSync(touched, atime, new Date());
    try {
      const third = await npmStart();
      expect(third.output()).toMatch(/^npm start: .*building$/m);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
    } finally {
      utimesSync(touched, atime, mtime);
    }
  }, 90_000);

  it('SIGTERM to npm reaches the service: it drains, exits, and leaves no process behind', async () => {
    const started = await npmStart();
    expect(started.servicePid).toBeGreaterThan(0);
    expect(started.servicePid).not.toBe(started.child.pid);
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    expect(started.output()).toContain('shutdown complete');
    expect(processExists(started.servicePid), 'the service outlived npm').toBe(false);
  }, 60_000);

  it('Ctrl-C (SIGINT to the process group) is one graceful stop, not a forced exit', async () => {
    const started = await npmStart();
    process.kill(-(started.child.pid as number), 'SIGINT');
    await started.exited;
    expect(started.output()).toContain('shutdown complete');
    expect(started.output()).not.toContain('second signal');
    expect(processExists(started.servicePid)).toBe(false);
  }, 60_000);
});
