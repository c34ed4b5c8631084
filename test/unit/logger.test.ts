// src/logger.ts on stdout, plain (pino's synchronous destination) and with the speed path
// batched-log (src/fast/batched-log.ts: the lines of one event-loop turn written together at
// the end of the turn): either way nothing waits for a timer and nothing is lost when the process
// exits right after logging. Runs the modules from the sources (through tsx) in a child process,
// because the destinations only apply to the real stdout.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { fastPaths } from '../helpers/node-http.js';

const LOGGER_TS = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));
const BATCHED_LOG_TS = fileURLToPath(new URL('../../src/fast/batched-log.ts', import.meta.url));

/** The line of the child's script that makes `logger`, plain or batched. */
const MAKE_LOGGER = {
  plain: `import { createLogger } from ${JSON.stringify(LOGGER_TS)};\nconst logger = createLogger('info');`,
  batched: `import { createLogger } from ${JSON.stringify(LOGGER_TS)};\nimport { batchedStdout } from ${JSON.stringify(BATCHED_LOG_TS)};\nconst logger = createLogger('info', undefined, batchedStdout);`,
};

/** Runs `body` with `logger` in scope in a fresh Node process; calls `onLine` for each stdout line as it arrives. */
function runWithLogger(kind: keyof typeof MAKE_LOGGER, body: string, onLine: (line: Record<string, unknown>) => void = () => undefined) {
  const script = `${MAKE_LOGGER[kind]}\n${body}`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines: Record<string, unknown>[] = [];
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    partial += chunk;
    let end;
    while ((end = partial.indexOf('\n')) >= 0) {
      const line = JSON.parse(partial.slice(0, end)) as Record<string, unknown>;
      partial = partial.slice(end + 1);
      lines.push(line);
      onLine(line);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited };
}

describe("log lines on stdout, plain (pino's synchronous destination)", () => testLogLines('plain'));
// Tests the speed path itself: skipped when FAST_PATHS turns batched-log off.
describe.skipIf(!fastPaths.has('batched-log'))('log lines on stdout, batched (src/fast/batched-log.ts)', () => testLogLines('batched'));

function testLogLines(kind: keyof typeof MAKE_LOGGER) {
  it('every line logged in a burst arrives whole and in order', async () => {
    const { lines, exited } = runWithLogger(kind, `for (let i = 0; i < 2000; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'burst');`);
    expect(await exited).toBe(0);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('a line logged just before process.exit() is not lost', async () => {
    const { lines, exited } = runWithLogger(kind, `logger.info('first'); setImmediate(() => { logger.info('last words'); process.exit(3); });`);
    expect(await exited).toBe(3);
    expect(lines.map((line) => line.msg)).toEqual(['first', 'last words']);
  });

  it('a line logged while idle goes out at the end of its turn, not after a timer', async () => {
    let loggedAt = 0;
    let arrivedAt = 0;
    // The child logs one line, then stays alive (reading stdin) until told to stop.
    const { child, exited } = runWithLogger(
      kind,
      `process.stdin.resume(); process.stdin.on('end', () => process.exit(0)); setTimeout(() => logger.info({ at: Date.now() }, 'idle line'), 50);`,
      (line) => {
        loggedAt = line.at as number;
        arrivedAt = Date.now();
        child.stdin.end();
      },
    );
    expect(await exited).toBe(0);
    expect(arrivedAt).toBeGreaterThan(0);
    expect(arrivedAt - loggedAt).toBeLessThan(150);
  });
}
