// Startup time of the service: the first start migrates the empty store; then STARTUP_SAMPLES
// restarts on the migrated store, each timed to the first 200.
import { stopChild } from './children.mjs';
import { log } from './log.mjs';
import { startService } from './processes.mjs';
import { STARTUP_SAMPLES } from './settings.mjs';
import { median } from './stats.mjs';

/** Sets `store.startup` = { firstStartMs, medianMs, samplesMs } on each store. */
export async function measureStartup(stores, workDir, workers) {
  for (const store of stores) {
    log(`bench: ${store.label}: startup time (1 first start + ${STARTUP_SAMPLES} restarts)…`);
    const samples = [];
    let firstStartMs;
    for (let i = 0; i <= STARTUP_SAMPLES; i += 1) {
      const service = await startService(store, workDir, workers);
      await stopChild(service.child);
      if (i === 0) firstStartMs = service.startupMs;
      else samples.push(service.startupMs);
    }
    store.startup = { firstStartMs, medianMs: median(samples), samplesMs: samples };
  }
}
