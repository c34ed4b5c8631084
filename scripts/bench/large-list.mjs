// GET /books at LARGE_BOOKS books: each store (and the Go/Gin reference's own store beside it)
// filled directly while no server runs on it, then a fresh service process, and after it a fresh
// Go/Gin process, timed one request at a time and under load, and the peak RSS of each. The
// library-scale phase measures the same way at its largest size (measureServer).
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { stopChild } from './children.mjs';
import { getToken, request } from './client.mjs';
import { fmtRun } from './format.mjs';
import { spawnGoGin } from './go-gin.mjs';
import { log } from './log.mjs';
import { readPeakRss } from './peak-rss.mjs';
import { startService } from './processes.mjs';
import { LARGE_BOOKS, LARGE_LIST_TIMEOUT_S, SEQUENTIAL_SAMPLES } from './settings.mjs';
import { median, round1, summarise } from './stats.mjs';
import { runLoad } from './wrk.mjs';

async function fill(store) {
  const count = await store.fillTo(LARGE_BOOKS);
  if (count !== LARGE_BOOKS) throw new Error(`${store.label}: ${count} books after filling, expected ${LARGE_BOOKS}`);
}

/**
 * Sets `store.largeList` on each store, with `goGin` (the reference's figures) and the ratios
 * when the reference ran on it; every server and wrk are pinned as the run's first half says.
 */
export async function measureLargeList(stores, goGin, workDir, tool, settings) {
  const mode = settings.modes[0];
  for (const store of stores) {
    const go = goGin.built && store.goGin;
    await fill(store);
    if (go) await fill(go.store);
    const shape = { books: LARGE_BOOKS, samples: SEQUENTIAL_SAMPLES, timeoutS: LARGE_LIST_TIMEOUT_S };
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    store.largeList = await measureServer(store.label, service, tool, settings, mode, shape);
    if (go) {
      const child = await spawnGoGin(goGin.built, go, workDir, mode.serverCpu);
      const reference = await measureServer(go.label, child, tool, settings, mode, shape);
      Object.assign(store.largeList, {
        goGin: reference,
        ratioToGoGin: reference.rps ? store.largeList.rps / reference.rps : null,
        peakRssToGoGin: reference.peakRssMiB ? store.largeList.peakRssMiB / reference.peakRssMiB : null,
      });
    }
  }
}

/**
 * One fresh server process ({ child, port }) listing `books` books: `samples` requests one at a
 * time (each timed to its last byte; the first one's books counted), the rounds (`connections`
 * clients, CONNECTIONS unless given; wrk's timeout `timeoutS`), its peak RSS; stopped after.
 */
export async function measureServer(label, { child, port }, tool, settings, mode, { books, samples, timeoutS, connections }) {
  let token = await getToken(port);
  const sequential = [];
  let responseBytes;
  for (let i = 0; i < samples; i += 1) {
    const t0 = performance.now();
    const response = await request(port, 'GET', '/books', { token, parse: i === 0, timeoutMs: timeoutS * 1000 });
    sequential.push(response.endedAt - t0);
    if (response.status !== 200 || (i === 0 && response.json?.data?.length !== books)) {
      throw new Error(`${label}: GET /books answered ${response.status} with ${response.json?.data?.length} books, expected ${books}`);
    }
    if (i === 0) responseBytes = Buffer.byteLength(response.text);
    else if (Buffer.byteLength(response.text) !== responseBytes) throw new Error(`${label}: GET /books answered ${Buffer.byteLength(response.text)} bytes, then ${responseBytes}`);
  }
  const rounds = [];
  const warmups = [];
  for (let round = 1; round <= settings.rounds; round += 1) {
    token = await getToken(port);
    const options = { port, path: '/books', token, timeoutS, cpu: mode.loadCpu, connections };
    if (settings.warmupS > 0) warmups.push(await runLoad(tool, { ...options, duration: settings.warmupS }));
    const result = await runLoad(tool, { ...options, duration: settings.durationS });
    rounds.push(result);
    log(`bench: round ${round}/${settings.rounds} GET /books (${books.toLocaleString('en-US')} books) [${label}]: ${fmtRun(result)}`);
  }
  const peak = readPeakRss(child.pid);
  await stopChild(child);
  return {
    books,
    responseBytes,
    sequential: { samples, medianMs: median(sequential), maxMs: Math.max(...sequential) },
    ...summarise(rounds, warmups),
    peakRssMiB: round1(peak.peakRssMiB),
    peakRssProcesses: peak.processes,
  };
}
