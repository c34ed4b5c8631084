// The tables printed to stdout at the end of a run (the same figures as the page, as text).
import { storeLabel, textTable } from './format.mjs';
import { LIBRARY_HEADING } from './library-page.mjs';
import { fillTable, fullListTable, libraryTable, libraryTargetTable } from './library-tables.mjs';
import { LARGE_BOOKS } from './settings.mjs';
import { fastPathTables, goGinSkips, resultTable, rssTable, serviceNotes, storeTables } from './tables.mjs';

export function renderConsole(report, stores) {
  const tables = storeTables(report, stores);
  const { settings, machine } = report;
  return [
    '',
    `Book service benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.loadGenerator}, load at start ${machine.loadAverageAtStart.join(' ')}`,
    `${settings.threads} thread, ${settings.connections} connections, ${settings.durationS} s per run after ${settings.warmupS} s warm-up (not counted; ${settings.settleS} s per scenario to settle before round 1), median of ${settings.rounds} round(s); errors summed over the rounds`,
    '',
    ...report.modes.flatMap((mode) => [`${mode.label}:`, textTable(...resultTable(mode)), '', textTable(...rssTable(mode)), '']),
    ...goGinSkips(report),
    `GET /books at ${LARGE_BOOKS.toLocaleString('en-US')} books (${settings.connections} connections, pinned as the first half), service and Go/Gin:`,
    textTable(...tables.large),
    '',
    textTable(...tables.startup),
    '',
    ...libraryLines(report),
    ...fastPathLines(report),
    ...Object.entries(report.stores)
      .filter(([, s]) => s.skipped)
      .map(([kind, s]) => `\n${storeLabel(kind)} skipped: ${s.skipped}`),
    '',
    ...serviceNotes(report).map((note) => `note: ${note}`),
    '',
  ].join('\n');
}

/** What each speed path buys: the same tables as the page. */
function fastPathLines(report) {
  const fast = report.fastPaths;
  if (!fast || fast.skipped) return [`What each speed path buys: not measured${fast?.skipped ? ` (${fast.skipped})` : ''}`];
  const tables = fastPathTables(report);
  return [
    `What each speed path buys (per core; all on vs FAST_PATHS=-<path>, same rounds, median of ${fast.how.rounds}; took ${fast.seconds.total} s):`,
    textTable(...tables.paths),
    ...(tables.plain
      ? ['', 'The plain service (FAST_PATHS=off) against all on:', textTable(...tables.plain), '', textTable(...tables.plainMemory)]
      : []),
  ];
}

/** Library scale: the same tables as the page. */
function libraryLines(report) {
  const library = report.libraryScale;
  if (!library || library.skipped) return [`${LIBRARY_HEADING}: not measured${library?.skipped ? ` (${library.skipped})` : ''}`, ''];
  return [
    `${LIBRARY_HEADING} (${library.connections} clients, pinned; took ${library.seconds} s):`,
    textTable(...libraryTargetTable(library)),
    '',
    textTable(...libraryTable(library)),
    '',
    textTable(...fullListTable(library)),
    '',
    textTable(...fillTable(library)),
    '',
  ];
}
