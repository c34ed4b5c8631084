// The tables printed to stdout at the end of a run (the same figures as the page, as text).
import { storeLabel, textTable } from './format.mjs';
import { LARGE_BOOKS } from './settings.mjs';
import { goGinSkips, resultTable, rssTable, serviceNotes, storeTables } from './tables.mjs';

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
    ...Object.entries(report.stores)
      .filter(([, s]) => s.skipped)
      .map(([kind, s]) => `\n${storeLabel(kind)} skipped: ${s.skipped}`),
    '',
    ...serviceNotes(report).map((note) => `note: ${note}`),
    '',
  ].join('\n');
}
