// POST /batch against single creates, per store, pinned as the per-core half is: books stored a
// second by POST /book under wrk (64 connections, one book a request) and by POST /batch of
// BATCH_BOOKS creates a request (BATCH_CONNECTIONS connections), in rounds that alternate the
// two on one fresh service; the medians. Runs inside `npm run bench` (plan.mjs), or alone:
// `node scripts/bench/batch.mjs` (run `npm run build` first) prints the table and writes
// bench-results/batch.json.
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { runPhaseAlone } from './alone.mjs';
import { stopChild } from './children.mjs';
import { getToken } from './client.mjs';
import { storeLabel } from './format.mjs';
import { log } from './log.mjs';
import { startService } from './processes.mjs';
import { BOOK_BODY } from './settings.mjs';
import { median, round1 } from './stats.mjs';
import { runLoad } from './wrk.mjs';

/** Creates in one POST /batch. */
export const BATCH_BOOKS = 1_000;
/** Clients sending batches at once. */
const BATCH_CONNECTIONS = 4;

const BATCH_BODY = JSON.stringify({ operations: Array.from({ length: BATCH_BOOKS }, () => ({ method: 'POST', path: '/book', body: JSON.parse(BOOK_BODY) })) });

/** Sets `store.batch` on each store: books a second one by one and in batches. */
export async function measureBatch(stores, { workDir, tool, settings }) {
  const mode = settings.modes[0];
  for (const store of stores) {
    log(`bench: ${store.label}: POST /batch of ${BATCH_BOOKS} creates against POST /book`);
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    const singles = [];
    const batches = [];
    for (let round = 0; round < settings.rounds; round += 1) {
      const token = await getToken(service.port);
      const single = await runLoad(tool, { port: service.port, method: 'POST', path: '/book', token, body: BOOK_BODY, duration: settings.durationS, cpu: mode.loadCpu, expectStatus: tool.name === 'wrk' ? 201 : undefined });
      singles.push({ booksPerS: single.rps, p99Ms: single.p99Ms });
      const batch = await runLoad(tool, {
        port: service.port,
        method: 'POST',
        path: '/batch',
        token,
        body: BATCH_BODY,
        duration: settings.durationS,
        cpu: mode.loadCpu,
        connections: BATCH_CONNECTIONS,
        timeoutS: 30,
        expectStatus: tool.name === 'wrk' ? 200 : undefined,
      });
      batches.push({ booksPerS: batch.rps * BATCH_BOOKS, p99Ms: batch.p99Ms });
    }
    await stopChild(service.child);
    const summary = (runs) => ({ booksPerS: Math.round(median(runs.map((run) => run.booksPerS))), p99Ms: round1(median(runs.map((run) => run.p99Ms))) });
    const single = summary(singles);
    const batch = summary(batches);
    store.batch = { books: BATCH_BOOKS, connections: BATCH_CONNECTIONS, single, batch, ratio: single.booksPerS ? batch.booksPerS / single.booksPerS : null };
    log(`bench: ${store.label}: ${single.booksPerS} books/s one a request, ${batch.booksPerS} in batches of ${BATCH_BOOKS} (${store.batch.ratio?.toFixed(1)}×)`);
  }
}

/** The table, as markdown lines, from `byKind` (store kind → its batch figures). */
export function batchTable(byKind) {
  const measured = Object.entries(byKind ?? {}).filter(([, figures]) => figures);
  if (measured.length === 0) return [];
  const { books, connections } = measured[0][1];
  const lines = [
    `| store | books/s, POST /book (64 connections) | books/s, POST /batch of ${books.toLocaleString('en-US')} (${connections} connections) | batch ÷ single | p99 of a batch |`,
    '|---|---|---|---|---|',
  ];
  for (const [kind, { single, batch, ratio }] of measured) {
    lines.push(`| ${storeLabel(kind)} | ${single.booksPerS.toLocaleString('en-US')} | ${batch.booksPerS.toLocaleString('en-US')} | ${ratio?.toFixed(1) ?? '–'}× | ${batch.p99Ms} ms |`);
  }
  return lines;
}

/** The page's section. */
export function batchSection(report) {
  const table = batchTable(report.batch);
  if (table.length === 0) return '';
  return `## Batches of creates

${table.join('\n')}

Books stored a second on a fresh service per store (pinned as the per-core half), by \`POST /book\` (one book a
request) and by \`POST /batch\` of ${BATCH_BOOKS.toLocaleString('en-US')} creates (one transaction; SQLite and PostgreSQL insert each run of
creates with one statement of up to 500 rows, MySQL and MariaDB too where \`innodb_autoinc_lock_mode\` hands out
consecutive ids, else one row at a time, as on Galera), in alternating rounds; the medians (scripts/bench/batch.mjs).
Importing a whole collection through batches (\`book-service import\`): docs/operations.md, "Importing a collection".

`;
}

// Alone: `node scripts/bench/batch.mjs` (BENCH_STORES, BENCH_ROUNDS, BENCH_DURATION apply).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPhaseAlone('batch', measureBatch, batchTable);
