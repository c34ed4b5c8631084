// Importing a collection through the API, per store, pinned as the per-core half is: a CSV of
// BENCH_IMPORT_BOOKS books (default 1,000,000) imported by `node dist/main.js import FILE` (the
// command pinned to the load CPU, the service to the server CPU, one batch of up to 1,000 books
// in flight), timed, and the store counted after; then, on the same service, POST /book one book
// a request, with 1 connection (what a loop of single requests gets) and with 64 (wrk), the
// median of BENCH_ROUNDS runs each, for the rate next to it. Not part of `npm run bench` (a million books take minutes a store): run it
// alone, `node scripts/bench/import.mjs` after `npm run build` (BENCH_STORES, BENCH_DURATION
// apply); it prints the table and writes bench-results/import.json.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { runPhaseAlone } from './alone.mjs';
import { runProcess, stopChild } from './children.mjs';
import { getToken } from './client.mjs';
import { storeLabel } from './format.mjs';
import { log } from './log.mjs';
import { childEnv, pinned, startService } from './processes.mjs';
import { BOOK_BODY, CREDENTIALS_BODY, MAIN_JS } from './settings.mjs';
import { median } from './stats.mjs';
import { runLoad } from './wrk.mjs';

const IMPORT_BOOKS = Number(process.env.BENCH_IMPORT_BOOKS ?? 1_000_000);
const AUTHORS = ['Ursula K. Le Guin', 'Octavia E. Butler', 'Italo Calvino', 'Chimamanda Ngozi Adichie', 'Jorge Luis Borges', 'Toni Morrison', 'Haruki Murakami'];
const WORDS = ['river', 'winter', 'glass', 'harbour', 'lantern', 'orchard', 'silence', 'atlas', 'ember', 'meridian', 'tide', 'cartographer'];

/** The CSV file of `count` books, with a quoted title now and then (commas and quotes in it). */
function writeImportFile(workDir, count) {
  const file = join(workDir, `import-${count}.csv`);
  const lines = ['title,author,year'];
  for (let index = 1; index <= count; index += 1) {
    const title = `The ${WORDS[index % WORDS.length]} of ${WORDS[(index * 7) % WORDS.length]}, book ${index}${index % 10 === 0 ? ' (the "long" one)' : ''}`;
    lines.push(`"${title.replaceAll('"', '""')}",${AUTHORS[index % AUTHORS.length]},${1800 + (index % 225)}`);
  }
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** Sets `store.import` on each store: the import's time and rate, and POST /book's rates. */
export async function measureImport(stores, { workDir, tool, settings }) {
  const mode = settings.modes[0];
  log(`bench: writing a CSV of ${IMPORT_BOOKS.toLocaleString('en-US')} books`);
  const file = writeImportFile(workDir, IMPORT_BOOKS);
  for (const store of stores) {
    log(`bench: ${store.label}: importing ${IMPORT_BOOKS.toLocaleString('en-US')} books with node dist/main.js import`);
    const service = await startService(store, workDir, mode.workers, mode.serverCpu);
    const { username, password } = JSON.parse(CREDENTIALS_BODY);
    const env = childEnv({ SERVICE_URL: `http://127.0.0.1:${service.port}`, AUTH_USERNAME: username, AUTH_PASSWORD: password });
    const started = performance.now();
    // Rejects, with its stderr, unless it exits 0 (every row imported).
    await runProcess(...pinned(mode.loadCpu, process.execPath, [MAIN_JS, 'import', file]), env, { cwd: workDir });
    const seconds = (performance.now() - started) / 1000;
    const stored = await store.resetTo(Number.MAX_SAFE_INTEGER);
    if (stored !== IMPORT_BOOKS) throw new Error(`the import on ${store.label} left ${stored} books, not ${IMPORT_BOOKS}`);
    const token = await getToken(service.port);
    const single = {};
    for (const connections of [1, 64]) {
      const rates = [];
      for (let round = 0; round < settings.rounds; round += 1) {
        const load = await runLoad(tool, { port: service.port, method: 'POST', path: '/book', token, body: BOOK_BODY, duration: settings.durationS, cpu: mode.loadCpu, connections, expectStatus: tool.name === 'wrk' ? 201 : undefined });
        rates.push(load.rps);
      }
      single[connections] = Math.round(median(rates));
    }
    await stopChild(service.child);
    store.import = { books: IMPORT_BOOKS, seconds: Math.round(seconds * 10) / 10, booksPerS: Math.round(IMPORT_BOOKS / seconds), singlePerS: single };
    log(`bench: ${store.label}: ${store.import.seconds} s (${store.import.booksPerS} books/s); POST /book ${single[1]}/s with 1 connection, ${single[64]}/s with 64`);
  }
}

/** The table, as markdown lines, from `byKind` (store kind → its import figures). */
export function importTable(byKind) {
  const measured = Object.entries(byKind ?? {}).filter(([, figures]) => figures);
  if (measured.length === 0) return [];
  const count = (value) => value.toLocaleString('en-US');
  const duration = (seconds) => (seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(1)} s`);
  const lines = [
    `| store | import of ${count(measured[0][1].books)} books | books/s | POST /book, 1 connection: books/s (the same books would take) | POST /book, 64 connections: books/s (would take) |`,
    '|---|---|---|---|---|',
  ];
  for (const [kind, { books, seconds, booksPerS, singlePerS }] of measured) {
    const would = (rate) => (rate > 0 ? duration(books / rate) : '–');
    lines.push(`| ${storeLabel(kind)} | ${duration(seconds)} | ${count(booksPerS)} | ${count(singlePerS[1])} (${would(singlePerS[1])}) | ${count(singlePerS[64])} (${would(singlePerS[64])}) |`);
  }
  return lines;
}

// Alone: `node scripts/bench/import.mjs` (BENCH_STORES, BENCH_DURATION, BENCH_IMPORT_BOOKS apply).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPhaseAlone('import', measureImport, importTable);
