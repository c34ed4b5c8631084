// The service's log after a run: counts per level and per status, the lines worth a note, and
// the file shrunk to what is worth keeping (unless BENCH_KEEP_LOGS=1).
import { createReadStream, createWriteStream, existsSync, renameSync } from 'node:fs';
import { createInterface } from 'node:readline';

export async function summariseLog(file, keepAll) {
  const summary = { lines: 0, byLevel: {}, responses: {}, notable: [] };
  if (!existsSync(file)) return summary;
  const notable = new Map();
  const kept = keepAll ? null : createWriteStream(`${file}.tmp`);
  const levelNames = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    summary.lines += 1;
    const levelNumber = /"level":(\d+)/.exec(line)?.[1];
    const level = levelNames[levelNumber] ?? (levelNumber ? `level ${levelNumber}` : 'not JSON');
    summary.byLevel[level] = (summary.byLevel[level] ?? 0) + 1;
    const status = Number(/"status":(\d+)/.exec(line)?.[1]);
    const isRequestLine = line.includes('"msg":"request completed"');
    if (isRequestLine) {
      const method = /"method":"([A-Z]+)"/.exec(line)?.[1] ?? '?';
      const route = /"route":"([^"]*)"/.exec(line)?.[1] ?? '?';
      const key = `${method} ${route} ${status}`;
      summary.responses[key] = (summary.responses[key] ?? 0) + 1;
    }
    const ordinary = isRequestLine && level === 'info' && status >= 200 && status < 300;
    if (!ordinary) kept?.write(`${line}\n`);
    // Worth a note: warnings and worse, anything not JSON (stderr), and every non-2xx answer.
    const worthANote = isRequestLine ? !ordinary : !['trace', 'debug', 'info'].includes(level);
    if (worthANote) {
      const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 200);
      const key = isRequestLine ? `${level}: request completed ${status}` : `${level}: ${message}`;
      const entry = notable.get(key) ?? { level, message: key.slice(level.length + 2), count: 0, example: line.slice(0, 600) };
      entry.count += 1;
      notable.set(key, entry);
    }
  }
  if (kept) {
    await new Promise((resolvePromise) => kept.end(resolvePromise));
    renameSync(`${file}.tmp`, file);
  }
  summary.notable = [...notable.values()].sort((a, b) => b.count - a.count);
  return summary;
}
