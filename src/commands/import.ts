// `import FILE [--dry-run]`: adds the books of a JSON or CSV file to a running service through
// POST /batch (docs/operations.md "Importing a collection"), as the web page's import does, with
// the same reading of the file (src/books/book-file.ts) and the same batches and keys
// (src/books/book-import.ts): run again after a cut, it finishes the import without creating a
// book twice. Invalid rows are listed on stderr and skipped; the summary goes to stdout.
// Exit 0: every row imported; 3: imported, but invalid rows were skipped; 1: stopped (the
// service refused or could not be reached: run the same command again to go on).
import { readFile } from 'node:fs/promises';
import { BookFileError, bookFileFormat, readBookFile, type BookFile } from '../books/book-file.js';
import { fileDigest, planImport, runImport, type BatchAnswer, type ImportBatch, type ImportProgress } from '../books/book-import.js';
import { loadImportSettings, type ImportSettings } from '../config.js';
import { StartupError } from '../startup-error.js';

/** Exit status of an import that finished with invalid rows left out. */
export const EXIT_ROWS_SKIPPED = 3;
/** Invalid rows listed one by one; past this, a count. */
const LISTED_INVALID_ROWS = 100;
/** One batch's request may take this long before it counts as lost (and is sent again). */
const BATCH_TIMEOUT_MS = 120_000;
/** Progress lines on stderr, at most this often. */
const PROGRESS_EVERY_MS = 5_000;

export async function importFile(file: string, { dryRun }: { dryRun: boolean }): Promise<number> {
  const settings = loadImportSettings(process.env, process.cwd());
  const text = await readText(file);
  let books: BookFile;
  try {
    books = readBookFile(text, bookFileFormat(file, text));
  } catch (error) {
    if (error instanceof BookFileError) throw new StartupError(`${file}: ${error.message}`);
    throw error;
  }
  reportInvalidRows(file, books);
  const plan = planImport(books.rows, await fileDigest(text));
  const counted = `${count(plan.books)} book${plan.books === 1 ? '' : 's'} in ${count(plan.batches.length)} batch${plan.batches.length === 1 ? '' : 'es'}`;
  if (dryRun) {
    process.stdout.write(`${file}: would import ${counted} to ${settings.serviceUrl}; nothing was sent (--dry-run)\n`);
    return books.invalid.length > 0 ? EXIT_ROWS_SKIPPED : 0;
  }
  if (plan.books === 0) {
    process.stdout.write(`${file}: no book to import\n`);
    return books.invalid.length > 0 ? EXIT_ROWS_SKIPPED : 0;
  }
  process.stderr.write(`book-service: importing ${counted} to ${settings.serviceUrl}\n`);
  const started = Date.now();
  const outcome = await runImport(plan, batchSender(settings), { onProgress: progressReporter(plan.books) });
  const { progress } = outcome;
  const seconds = (Date.now() - started) / 1000;
  const replayed = progress.batchesReplayed > 0 ? `; ${count(progress.batchesReplayed)} of the batches had been applied before (by an earlier run, or a send whose answer was lost)` : '';
  if (outcome.kind === 'stopped') {
    throw new StartupError(
      `stopped at batch ${outcome.batch.number} of ${plan.batches.length} after ${count(progress.booksDone)} books (${outcome.reason}); run the same command again to go on: what was imported is not imported twice${replayed}`,
    );
  }
  const rate = seconds > 0 ? `, ${count(Math.round(progress.booksDone / seconds))} books/s` : '';
  const skipped = books.invalid.length > 0 ? `; ${count(books.invalid.length)} invalid row${books.invalid.length === 1 ? '' : 's'} skipped` : '';
  process.stdout.write(`${file}: imported ${count(progress.booksDone)} books in ${seconds.toFixed(1)} s${rate}${replayed}${skipped}\n`);
  return books.invalid.length > 0 ? EXIT_ROWS_SKIPPED : 0;
}

async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new StartupError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

function reportInvalidRows(file: string, { invalid, positionName }: BookFile) {
  if (invalid.length === 0) return;
  const lines = invalid.slice(0, LISTED_INVALID_ROWS).map(({ position, problems }) => `  ${positionName} ${position}: ${problems.join(' ')}\n`);
  if (invalid.length > LISTED_INVALID_ROWS) lines.push(`  … and ${count(invalid.length - LISTED_INVALID_ROWS)} more\n`);
  process.stderr.write(`book-service: ${file}: ${count(invalid.length)} invalid row${invalid.length === 1 ? '' : 's'}, not imported:\n${lines.join('')}`);
}

/**
 * Sends a batch with a token, signing in again when the token has expired (they last 15
 * minutes). A refused sign-in is answered as the batch's answer (not sent again); a sign-in
 * that got no answer throws, and runImport tries again.
 */
function batchSender({ serviceUrl, username, password }: ImportSettings) {
  let token: string | undefined;
  return async (batch: ImportBatch): Promise<BatchAnswer> => {
    for (let signedIn = 0; ; signedIn += 1) {
      if (token === undefined) {
        const answer = await postJson(`${serviceUrl}/token`, JSON.stringify({ username, password }), {});
        const data = answer.data as { token?: unknown } | null;
        if (answer.status !== 200 || typeof data?.token !== 'string') return { ...answer, message: `signing in as AUTH_USERNAME: ${answer.message}` };
        token = data.token;
      }
      const answer = await postJson(`${serviceUrl}/batch`, batch.body, { authorization: `Bearer ${token}`, 'idempotency-key': batch.idempotencyKey });
      if (answer.status !== 401 || signedIn > 0) return answer;
      token = undefined; // expired: sign in once more and send the batch again
    }
  };
}

async function postJson(url: string, body: string, headers: Record<string, string>): Promise<BatchAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
    body,
    signal: AbortSignal.timeout(BATCH_TIMEOUT_MS),
  });
  const text = await response.text();
  let envelope: { message?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(text) as typeof envelope;
  } catch {
    envelope = {};
  }
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  return {
    status: response.status,
    message: typeof envelope.message === 'string' ? envelope.message : `HTTP ${response.status} without the service's JSON`,
    data: envelope.data ?? null,
    retryAfter: Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter : undefined,
    replayed: response.headers.get('idempotent-replayed') === 'true',
  };
}

/** A line on stderr every few seconds, and each retry. */
function progressReporter(total: number) {
  let lastLine = Date.now();
  return (progress: ImportProgress) => {
    if (progress.retrying) {
      const { batch, attempt, reason, waitMs } = progress.retrying;
      process.stderr.write(`book-service: batch ${batch}: ${reason}; sending it again in ${(waitMs / 1000).toFixed(1)} s (try ${attempt + 1})\n`);
      return;
    }
    if (Date.now() - lastLine < PROGRESS_EVERY_MS) return;
    lastLine = Date.now();
    process.stderr.write(`book-service: ${count(progress.booksDone)} of ${count(total)} books imported\n`);
  };
}

function count(value: number): string {
  return value.toLocaleString('en-US');
}
