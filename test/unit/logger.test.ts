// src/logger.ts on stdout: lines of one event-loop turn are written together at the end of the
// turn, so nothing waits for a timer and nothing is lost when the process exits right after
// logging. Runs the module from the sources (through tsx) in a child process, because the
// batching only applies to the real stdout.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LOGGER_TS = fileURLToPath(new URL('../../src/logger.ts', import.meta.url));

/** Runs `body` with `logger` in scope in a fresh Node process; calls `onLine` for each stdout line as it arrives. */
function runWithLogger(body: string, onLine: (line: Record<string, unknown>) => void = () => undefined) {
  const script = `import { createLogger } from ${JSON.stringify(LOGGER_TS)};\nconst logger = createLogger('info');\n${body}`;
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

describe('log lines on stdout', () => {
  it('every line logged in a burst arrives whole and in order', async () => {
    const { lines, exited } = runWithLogger(`for (let i = 0; i < 2000; i++) logger.info({ i, pad: 'x'.repeat(100) }, 'burst');`);
    expect(await exited).toBe(0);
    expect(lines.map((line) => line.i)).toEqual(Array.from({ length: 2000 }, (_, i) => i));
  });

  it('a line logged just before process.exit() is not lost', async () => {
    const { lines, exited } = runWithLogger(`logger.info('first'); setImmediate(() => { logger.info('last words'); process.exit(3); });`);
    expect(await exited).toBe(3);
    expect(lines.map((line) => line.msg)).toEqual(['first', 'last words']);
  });

  it('a line logged while idle goes out at the end of its turn, not after a timer', async () => {
    let loggedAt = 0;
    let arrivedAt = 0;
    // The child logs one line, then stays alive (reading stdin) until told to stop.
    const { child, exited } = runWithLogger(
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
});
