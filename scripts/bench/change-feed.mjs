// The change feed (GET /books/changes), per store, pinned as the per-core half is:
//  - writes with and without subscribers: POST /book under wrk on a fresh service, in rounds that
//    alternate no subscriber and CHANGE_FEED_SUBSCRIBERS subscribers (SSE streams opened by this
//    process, reading every event); the medians, and the events the subscribers received;
//  - delivery delay across instances: two services on the same store (SQLite: one with
//    WORKERS=2, whose workers take turns), wrk writing through the first, and a probe that
//    creates a book through the first every PROBE_EVERY_MS and times its event on a stream of the
//    second; p50, p99 and max over the run.
// Runs inside `npm run bench` (plan.mjs), or alone: `node scripts/bench/change-feed.mjs` (builds
// nothing: run `npm run build` first) prints the tables and writes bench-results/change-feed.json.
import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { runPhaseAlone } from './alone.mjs';
import { stopChild } from './children.mjs';
import { getToken, request } from './client.mjs';
import { storeLabel } from './format.mjs';
import { log } from './log.mjs';
import { startService } from './processes.mjs';
import { BOOK_BODY } from './settings.mjs';
import { median, round1 } from './stats.mjs';
import { runLoad } from './wrk.mjs';

/** Subscribers of the "with subscribers" rounds. */
export const CHANGE_FEED_SUBSCRIBERS = 100;
/** How often the delay probe writes a book. */
const PROBE_EVERY_MS = 50;
/** wrk's clients writing while the delay is measured (the probe's writes queue behind theirs). */
const DELAY_LOAD_CONNECTIONS = 16;

/** An SSE stream read by this process: counts its events, and calls `onEvent` with each one's data. */
function openStream(port, token, onEvent) {
  return new Promise((resolve, reject) => {
    let events = 0;
    let buffer = '';
    const outgoing = httpRequest({ host: '127.0.0.1', port, path: '/books/changes', headers: { authorization: token }, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        reject(new Error(`GET /books/changes answered ${response.statusCode}`));
        return;
      }
      response.setEncoding('utf8');
      response.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (data === undefined) continue;
          events += 1;
          onEvent?.(data);
        }
      });
      resolve({ close: () => outgoing.destroy(), events: () => events });
    });
    outgoing.on('error', (error) => (events === 0 ? reject(error) : undefined));
    outgoing.end();
  });
}

/** POST /book under wrk for one round, with `subscribers` streams open; the run and the events they received. */
async function writeRound(tool, settings, mode, port, token, subscribers) {
  const streams = [];
  for (let i = 0; i < subscribers; i += 1) streams.push(await openStream(port, token));
  const run = await runLoad(tool, { port, method: 'POST', path: '/book', token, body: BOOK_BODY, duration: settings.durationS, cpu: mode.loadCpu });
  // The events of the round's last writes are still on their way: a moment for them.
  await sleep(500);
  const received = streams.map((stream) => stream.events());
  for (const stream of streams) stream.close();
  return { rps: run.rps, p99Ms: run.p99Ms, errors: run.errors, requests: run.requests, eventsPerSubscriber: received.length ? median(received) : null };
}

/** Writes through `writer` under load and times each probe book's event on a stream of `reader`. */
async function measureDelay(tool, settings, mode, writer, reader, token) {
  const sentAt = new Map();
  const delays = [];
  const stream = await openStream(reader, token, (data) => {
    const title = /"title":"(probe [0-9]+)"/.exec(data)?.[1];
    const sent = title && sentAt.get(title);
    if (sent !== undefined) delays.push(performance.now() - sent);
  });
  let probing = true;
  let probes = 0;
  const probe = (async () => {
    while (probing) {
      const title = `probe ${probes}`;
      probes += 1;
      sentAt.set(title, performance.now());
      await request(writer, 'POST', '/book', { token, body: JSON.stringify({ title, author: 'Delay probe', year: 2026 }), parse: false });
      await sleep(PROBE_EVERY_MS);
    }
  })();
  const load = await runLoad(tool, {
    port: writer,
    method: 'POST',
    path: '/book',
    token,
    body: BOOK_BODY,
    duration: settings.durationS * 2,
    cpu: mode.loadCpu,
    connections: DELAY_LOAD_CONNECTIONS,
  });
  probing = false;
  await probe;
  await sleep(2_000);
  stream.close();
  const sorted = delays.sort((a, b) => a - b);
  const at = (share) => (sorted.length ? round1(sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]) : null);
  return { probes, delivered: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.length ? round1(sorted.at(-1)) : null, loadRps: load.rps };
}

/** Sets `store.changeFeed` on each store: { writes: { none, subscribed }, delay }. */
export async function measureChangeFeed(stores, { workDir, tool, settings }) {
  const mode = settings.modes[0];
  for (const store of stores) {
    log(`bench: ${store.label}: change feed, POST /book with 0 and ${CHANGE_FEED_SUBSCRIBERS} subscribers`);
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    let token = await getToken(service.port);
    const rounds = { none: [], subscribed: [] };
    for (let round = 0; round < settings.rounds; round += 1) {
      // Tokens live 15 minutes: a fresh one each round.
      token = await getToken(service.port);
      rounds.none.push(await writeRound(tool, settings, mode, service.port, token, 0));
      rounds.subscribed.push(await writeRound(tool, settings, mode, service.port, token, CHANGE_FEED_SUBSCRIBERS));
    }
    const summary = (runs) => ({
      rps: Math.round(median(runs.map((run) => run.rps))),
      p99Ms: round1(median(runs.map((run) => run.p99Ms))),
      errors: runs.reduce((sum, run) => sum + run.errors, 0),
      requests: runs.reduce((sum, run) => sum + run.requests, 0),
      eventsPerSubscriber: runs[0].eventsPerSubscriber === null ? null : Math.round(median(runs.map((run) => run.eventsPerSubscriber))),
      rounds: runs.map((run) => Math.round(run.rps)),
    });
    const writes = { none: summary(rounds.none), subscribed: summary(rounds.subscribed) };
    writes.ratio = writes.none.rps ? writes.subscribed.rps / writes.none.rps : null;

    // Delivery across instances: a second service on the store (SQLite: the first with WORKERS=2).
    let second;
    let delay;
    if (store.kind === 'sqlite') {
      await stopChild(service.child);
      const both = await startService(store, workDir, 2, mode.serverCpu);
      delay = await measureDelay(tool, settings, mode, both.port, both.port, await getToken(both.port));
      delay.how = 'WORKERS=2: the probe and its stream on either worker (taken in turns)';
      await stopChild(both.child);
    } else {
      second = await startService(store, workDir, mode.workers, undefined);
      delay = await measureDelay(tool, settings, mode, service.port, second.port, token);
      delay.how = 'written through one instance, read on a stream of another';
      await stopChild(second.child);
      await stopChild(service.child);
    }
    store.changeFeed = { subscribers: CHANGE_FEED_SUBSCRIBERS, writes, delay };
    log(
      `bench: ${store.label}: POST /book ${writes.none.rps} req/s without subscribers, ${writes.subscribed.rps} with ${CHANGE_FEED_SUBSCRIBERS} ` +
        `(${writes.subscribed.eventsPerSubscriber} events each); delivery p50 ${delay.p50Ms} ms, p99 ${delay.p99Ms} ms, max ${delay.maxMs} ms ` +
        `(${delay.delivered}/${delay.probes} probes, ${Math.round(delay.loadRps)} writes/s)`,
    );
  }
}

/** The change feed's table, as markdown lines, from `byKind` (store kind → its changeFeed figures). */
export function changeFeedTable(byKind) {
  const measured = Object.entries(byKind ?? {}).filter(([, figures]) => figures);
  if (measured.length === 0) return [];
  const { subscribers } = measured[0][1];
  const lines = [
    `| store | POST /book, no subscriber | with ${subscribers} subscribers | ratio | events each subscriber received | delivery p50 | p99 | max | how |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const [kind, { writes, delay }] of measured) {
    const writesPerRound = Math.round(writes.subscribed.requests / writes.subscribed.rounds.length);
    lines.push(
      `| ${storeLabel(kind)} | ${writes.none.rps.toLocaleString('en-US')} req/s | ${writes.subscribed.rps.toLocaleString('en-US')} req/s | ` +
        `${writes.ratio?.toFixed(2) ?? '–'} | ${writes.subscribed.eventsPerSubscriber?.toLocaleString('en-US') ?? '–'} (${writesPerRound.toLocaleString('en-US')} writes answered a round) | ` +
        `${delay.p50Ms} ms | ${delay.p99Ms} ms | ${delay.maxMs} ms | ${delay.how}; ${delay.delivered}/${delay.probes} probes, ${Math.round(delay.loadRps).toLocaleString('en-US')} writes/s of load |`,
    );
  }
  return lines;
}

/** The page's section. */
export function changeFeedSection(report) {
  const table = changeFeedTable(report.changeFeed);
  if (table.length === 0) return '';
  return `## The change feed

${table.join('\n')}

POST /book on a fresh service per store (pinned as the per-core half), in rounds that alternate no subscriber and
${CHANGE_FEED_SUBSCRIBERS} subscribers (\`GET /books/changes\` streams opened and read by the bench's process, on the load
generator's side); the medians. **Delivery** is the time from sending a probe \`POST /book\` (one every ${PROBE_EVERY_MS} ms)
through one instance to its event on a stream of another (SQLite: one service with \`WORKERS=2\`), while wrk writes through
the first with ${DELAY_LOAD_CONNECTIONS} connections (scripts/bench/change-feed.mjs).

`;
}

// Alone: `node scripts/bench/change-feed.mjs` (BENCH_STORES, BENCH_ROUNDS, BENCH_DURATION apply).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPhaseAlone('changeFeed', measureChangeFeed, changeFeedTable);
