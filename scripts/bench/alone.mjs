// Running one phase of the bench on its own (`node scripts/bench/<phase>.mjs`): fresh stores of
// the kinds BENCH_STORES names, the per-core settings (BENCH_ROUNDS, BENCH_DURATION apply), the
// phase, its table printed and its figures written to bench-results/<name>.json. Builds nothing:
// run `npm run build` first.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { cleanup, onCleanup } from './children.mjs';
import { LOG_DIR, RESULTS_DIR, readSettings, wantedStores } from './settings.mjs';
import { openStores } from './stores.mjs';
import { chooseTool } from './wrk.mjs';

/** Runs `measure(stores, context)`, then prints `table(byKind)` of what it set as `store[name]`. */
export async function runPhaseAlone(name, measure, table) {
  const settings = { ...readSettings(), modes: readSettings().modes.filter((mode) => mode.id === 'core') };
  const tool = chooseTool();
  mkdirSync(LOG_DIR, { recursive: true });
  const tempDir = mkdtempSync(join(os.tmpdir(), `books-bench-${name}-`));
  onCleanup(() => rmSync(tempDir, { recursive: true, force: true }));
  const workDir = join(tempDir, 'cwd');
  mkdirSync(workDir);
  try {
    const { stores } = await openStores(wantedStores(), tempDir);
    for (const store of stores) {
      store.secret = randomBytes(48).toString('base64url');
      store.logFile = join(LOG_DIR, `${name}-${store.kind}.log`);
      writeFileSync(store.logFile, '');
    }
    await measure(stores, { workDir, tool, settings });
    const byKind = Object.fromEntries(stores.map((store) => [store.kind, store[name]]));
    console.log(table(byKind).join('\n'));
    writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(byKind, null, 2)}\n`);
  } finally {
    await cleanup();
  }
}
