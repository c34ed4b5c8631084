// The tables printed to stdout at the end of a run (the same figures as the page, as text).
import { join, relative } from 'node:path';
import { storeLabel, textTable } from './format.mjs';
import { GO_DIR, LARGE_BOOKS, ROOT } from './settings.mjs';
import { goGinSkips, goGinTable, resultTable, serviceNotes, storeTables } from './tables.mjs';

function goGinConsole(report) {
  const table = goGinTable(report);
  const [, rows] = table;
  return [
    ...(rows.length ? [`Go/Gin reference (${relative(ROOT, join(GO_DIR, 'main.go'))}), same rounds:`, textTable(...table)] : []),
    ...goGinSkips(report),
    ...(rows.length || goGinSkips(report).length ? [''] : []),
  ];
}

export function renderConsole(report, stores) {
  const tables = storeTables(report, stores);
  const { settings, machine } = report;
  return [
    '',
    `Book service benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.loadGenerator}`,
    `${settings.threads} thread, ${settings.connections} connections, ${settings.durationS} s per run after ${settings.warmupS} s warm-up, median of ${settings.rounds} round(s); errors summed over the rounds`,
    '',
    textTable(...resultTable(report)),
    '',
    ...goGinConsole(report),
    `GET /books at ${LARGE_BOOKS.toLocaleString('en-US')} books (${settings.connections} connections):`,
    textTable(...tables.large),
    '',
    textTable(...tables.rss),
    '',
    textTable(...tables.startup),
    ...Object.entries(report.stores)
      .filter(([, s]) => s.skipped)
      .map(([kind, s]) => `\n${storeLabel(kind)} skipped: ${s.skipped}`),
    '',
    ...serviceNotes(report).map((note) => `note: ${note}`),
    '',
  ].join('\n');
}
