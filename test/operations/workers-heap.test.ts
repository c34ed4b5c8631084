// WORKERS=N: each worker gets a V8 heap ceiling of 1 GiB (src/commands/supervise.ts) unless the
// operator chose one, because with Node's default ceiling on a large machine V8 lets the heap
// grow 4× between full collections (docs/operations.md "Processes and memory").
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';

const dir = mkdtempSync(join(tmpdir(), 'workers-heap-'));
afterAll(async () => {
  await killAllChildServices();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts WORKERS=2 and returns the node flags each worker runs with (from /proc/<pid>/cmdline). */
async function workerFlags(name: string, env: Record<string, string> = {}): Promise<string[][]> {
  const service: ChildService = await startService({
    childProcess: true,
    dbUrl: `sqlite:${join(dir, `${name}.db`)}`,
    env: { WORKERS: '2', LOG_LEVEL: 'info', ...env },
  });
  try {
    let pids: number[] = [];
    for (let waited = 0; pids.length < 2 && waited < 15_000; waited += 50) {
      pids = service.process
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"book service ready"'))
        .map((line) => (JSON.parse(line) as { pid: number }).pid);
      if (pids.length < 2) await sleep(50);
    }
    expect(pids).toHaveLength(2);
    return pids.map((pid) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean));
  } finally {
    expect(await service.stop('SIGTERM')).toBe(0);
  }
}

describe('the workers’ heap ceiling (WORKERS=2)', () => {
  // Skipped where Node's own ceiling is already 1 GiB or less (a small machine or container):
  // there the supervisor adds nothing, by design.
  it.runIf(getHeapStatistics().heap_size_limit > 1024 * 2 ** 20)(
    'Node’s default ceiling is above 1 GiB here, so every worker runs with --max-old-space-size=1024',
    async () => {
      for (const flags of await workerFlags('default')) expect(flags).toContain('--max-old-space-size=1024');
    },
    30_000,
  );

  it('a ceiling the operator chose in NODE_OPTIONS, even a higher one, is left alone (a flag on the command line would override it)', async () => {
    for (const flags of await workerFlags('chosen', { NODE_OPTIONS: '--max-old-space-size=2048' })) {
      expect(flags.some((flag) => flag.startsWith('--max-old-space-size'))).toBe(false);
    }
  }, 30_000);
});
