// How figures are written: req/s, milliseconds, MiB, ratios, errors, store names, one-line
// messages, and tables as aligned text or markdown.

export function fmtRps(value) {
  return value == null ? '–' : Math.round(value).toLocaleString('en-US');
}

export function fmtMs(value) {
  if (value == null) return '–';
  return `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ms`;
}

export function fmtMiB(value) {
  return value == null ? '–' : `${value.toFixed(1)} MiB`;
}

export function fmtRatio(value) {
  return value == null ? '–' : `${value.toFixed(value < 0.1 ? 3 : 2)}×`;
}

export function fmtErrors(result) {
  if (result.errors === 0) return '0';
  const parts = [];
  if (result.non2xx) parts.push(`${result.non2xx} non-2xx`);
  for (const [kind, n] of Object.entries(result.socketErrors)) if (n) parts.push(`${n} ${kind}`);
  return `${result.errors} (${parts.join(', ')})`;
}

/** One measured run for a progress line: req/s, p50, p99, errors. */
export function fmtRun(result) {
  return `${fmtRps(result.rps)} req/s, p50 ${fmtMs(result.p50Ms)}, p99 ${fmtMs(result.p99Ms)}, max ${fmtMs(result.maxMs)}, errors ${result.errors}`;
}

export function storeLabel(kind) {
  return { sqlite: 'SQLite', postgres: 'PostgreSQL', mysql: 'MariaDB', 'node:http': '—' }[kind] ?? kind;
}

export function oneLine(text, max = 400) {
  const line = text.trim().replace(/\s*\n\s*/g, ' / ');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

export function textTable(header, rows, rightAligned = new Set()) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function mdTable(header, rows, rightAligned = new Set()) {
  const align = header.map((_, i) => (rightAligned.has(i) ? '---:' : '---'));
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}
