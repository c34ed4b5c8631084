// Startup times: the service's first start migrates the empty store; then STARTUP_SAMPLES
// restarts on the migrated store, each timed to the first 200. The Go/Gin reference's restarts
// on its own store (created by its first process) are timed the same way.
import { stopChild } from './children.mjs';
import { spawnGoGin } from './go-gin.mjs';
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

/**
 * Once the reference has run on a store (its table created): STARTUP_SAMPLES restarts, not
 * pinned, like the service's; sets `store.startup.goGin` = { medianMs, samplesMs } and the ratio.
 */
export async function measureGoGinStartup(stores, goGin, workDir) {
  for (const store of goGin.built ? stores : []) {
    if (!store.goGin) continue;
    log(`bench: ${store.goGin.label}: startup time (${STARTUP_SAMPLES} restarts)…`);
    const samples = [];
    for (let i = 0; i < STARTUP_SAMPLES; i += 1) {
      const { child, startupMs } = await spawnGoGin(goGin.built, store.goGin, workDir, undefined);
      await stopChild(child);
      samples.push(startupMs);
    }
    const medianMs = median(samples);
    store.startup.goGin = { medianMs, samplesMs: samples };
    store.startup.ratioToGoGin = medianMs ? store.startup.medianMs / medianMs : null;
  }
}
