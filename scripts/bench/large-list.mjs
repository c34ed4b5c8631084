// GET /books at LARGE_BOOKS books: each store filled directly while its service is stopped, then a
// fresh service process timed one request at a time and under load, and its peak RSS.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { stopChild } from './children.mjs';
import { getToken, request } from './client.mjs';
import { fmtRun } from './format.mjs';
import { log } from './log.mjs';
import { readPeakRss } from './peak-rss.mjs';
import { startService } from './processes.mjs';
import { LARGE_BOOKS, LARGE_LIST_TIMEOUT_S, SEQUENTIAL_SAMPLES } from './settings.mjs';
import { median, round1, summarise } from './stats.mjs';
import { runLoad } from './wrk.mjs';

/** Sets `store.largeList` on each store; the service and wrk are pinned as the run's first half says. */
export async function measureLargeList(stores, workDir, tool, settings) {
  const mode = settings.modes[0];
  for (const store of stores) {
    const count = await store.fillTo(LARGE_BOOKS);
    if (count !== LARGE_BOOKS) throw new Error(`${store.label}: ${count} books after filling, expected ${LARGE_BOOKS}`);
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    const port = service.port;
    let token = await getToken(port);
    const sequential = [];
    for (let i = 0; i < SEQUENTIAL_SAMPLES; i += 1) {
      const t0 = performance.now();
      const response = await request(port, 'GET', '/books', { token });
      sequential.push(performance.now() - t0);
      if (response.status !== 200 || response.json?.data?.length !== LARGE_BOOKS) {
        throw new Error(`${store.label}: GET /books answered ${response.status} with ${response.json?.data?.length} books`);
      }
      if (i === 0) store.largeListBytes = Buffer.byteLength(response.text);
    }
    const rounds = [];
    const warmups = [];
    for (let round = 1; round <= settings.rounds; round += 1) {
      token = await getToken(port);
      const options = { port, path: '/books', token, timeoutS: LARGE_LIST_TIMEOUT_S, cpu: mode.loadCpu };
      if (settings.warmupS > 0) warmups.push(await runLoad(tool, { ...options, duration: settings.warmupS }));
      const result = await runLoad(tool, { ...options, duration: settings.durationS });
      rounds.push(result);
      log(
        `bench: round ${round}/${settings.rounds} GET /books (${LARGE_BOOKS.toLocaleString('en-US')} books) [${store.label}]: ` +
          fmtRun(result),
      );
    }
    const peak = readPeakRss(service.child.pid);
    await stopChild(service.child);
    store.largeList = {
      books: LARGE_BOOKS,
      responseBytes: store.largeListBytes,
      sequential: { samples: SEQUENTIAL_SAMPLES, medianMs: median(sequential), maxMs: Math.max(...sequential) },
      ...summarise(rounds, warmups),
      peakRssMiB: round1(peak.peakRssMiB),
      peakRssProcesses: peak.processes,
    };
  }
}
