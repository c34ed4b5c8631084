// Import and export (README "Web page", issue 34), loaded by app.ts the first time the person
// opens "Import and export": the first page load does not carry it.
//
// Import: a JSON or CSV file is read and checked in the page (src/books/book-file.ts, the
// forms' own rules), and what it would do is shown before anything is written: how many books
// it adds, and every row that is not a book, with its line or element and why. Confirmed, it is
// sent in batches of up to 1,000 books (POST /batch, src/books/book-import.ts), each with an
// Idempotency-Key made of the file's digest and the batch's place: a batch whose answer is lost
// is sent again and never makes a book twice, and importing the same file again after a reload,
// a lost connection or Stop finishes the import (the batches already applied answer
// `Idempotent-Replayed: true`) while the keys live (IDEMPOTENCY_TTL). The import under way is
// remembered in localStorage (import-record.ts) so a reload can say it stopped.
//
// Export: the whole collection (GET /books without parameters answers every book), downloaded
// as `books-YYYY-MM-DD.json` or `.csv`, ids exact (api.ts keeps them as their digits).
import { BookFileError, bookFileFormat, booksAsCsv, booksAsJson, readBookFile, type BookFile } from '../../src/books/book-file.js';
import { fileDigest, planImport, runImport, type BatchAnswer, type ImportBatch, type ImportPlan, type ImportProgress } from '../../src/books/book-import.js';
import { JsonText, asBook } from './api.js';
import type { Book } from './books.js';
import { ownImport } from './changes.js';
import { byId, elements } from './elements.js';
import { importInterrupted, rememberImport } from './import-record.js';
import { describe, messageOf } from './messages.js';
import { authorized, signedIn } from './sign-in.js';
import { announce, refresh } from './table.js';

const ui = {
  file: byId('import-file', HTMLInputElement),
  note: byId('import-note', HTMLParagraphElement),
  preview: byId('import-preview', HTMLDivElement),
  summary: byId('import-summary', HTMLParagraphElement),
  invalid: byId('import-invalid', HTMLDivElement),
  invalidHeading: byId('import-invalid-heading', HTMLHeadingElement),
  invalidList: byId('import-invalid-list', HTMLUListElement),
  invalidMore: byId('import-invalid-more', HTMLParagraphElement),
  start: byId('import-start', HTMLButtonElement),
  cancel: byId('import-cancel', HTMLButtonElement),
  running: byId('import-running', HTMLDivElement),
  bar: byId('import-bar', HTMLProgressElement),
  progress: byId('import-progress', HTMLParagraphElement),
  stop: byId('import-stop', HTMLButtonElement),
  result: byId('import-result', HTMLParagraphElement),
  error: byId('import-error', HTMLParagraphElement),
  again: byId('import-again', HTMLDivElement),
  resume: byId('import-continue', HTMLButtonElement),
  exportJson: byId('export-json', HTMLButtonElement),
  exportCsv: byId('export-csv', HTMLButtonElement),
  exportStatus: byId('export-status', HTMLParagraphElement),
  exportError: byId('export-error', HTMLParagraphElement),
};

const SIGNED_OUT = 'Signed out';

/** The preview lists this many invalid rows, then says how many more there are. */
const INVALID_SHOWN = 100;

/** A file read, checked and cut into batches: what Import sends. */
interface Prepared {
  name: string;
  digest: string;
  file: BookFile;
  plan: ImportPlan;
}

/** The file previewed, waiting for "Import N books". */
let prepared: Prepared | undefined;
/** The import that stopped, for "Continue the import". */
let stopped: Prepared | undefined;
/** The import under way: Stop aborts it. */
let running: AbortController | undefined;
/** Counts the files chosen: a file read after another was chosen is not shown. */
let choice = 0;

const numberFormat = new Intl.NumberFormat('en');
function count(value: number, one?: string, many?: string): string {
  const number = numberFormat.format(value);
  return one === undefined ? number : `${number} ${value === 1 ? one : (many ?? `${one}s`)}`;
}

// ---------------------------------------------------------------------------------------
// Choosing a file: read, checked and shown, nothing sent
// ---------------------------------------------------------------------------------------

ui.file.addEventListener('change', () => void choose());

async function choose(): Promise<void> {
  const picked = ui.file.files?.[0];
  const asked = ++choice;
  prepared = undefined;
  ui.preview.hidden = true;
  ui.result.textContent = '';
  ui.error.textContent = '';
  if (!picked) return;
  ui.summary.textContent = '';
  ui.note.textContent = `Reading ${picked.name}…`;
  try {
    const text = await picked.text();
    const file = readBookFile(text, bookFileFormat(picked.name, text));
    const digest = await fileDigest(text);
    if (asked !== choice) return;
    prepared = { name: picked.name, digest, file, plan: planImport(file.rows, digest) };
    showPreview(prepared);
  } catch (error) {
    if (asked !== choice) return;
    showInterrupted();
    ui.error.textContent =
      error instanceof BookFileError
        ? `${picked.name} cannot be imported: ${error.message} Nothing was written.`
        : `${picked.name} could not be read (${error instanceof Error ? error.message : String(error)}). Nothing was written.`;
  }
}

function showPreview({ name, digest, file, plan }: Prepared): void {
  const books = plan.books;
  const skipped = file.invalid.length;
  const record = importInterrupted();
  const resumes = record?.digest === digest && record.done > 0;
  ui.note.textContent = resumes
    ? `An import of this file stopped after batch ${count(record.done)} of ${count(record.total)}: importing it now sends the rest, and the batches already imported create no book twice.`
    : '';
  const batches = plan.batches.length;
  ui.summary.textContent =
    books === 0
      ? `${name}: no row is a book that can be imported${skipped > 0 ? `; ${count(skipped, 'row is', 'rows are')} invalid (below)` : ''}. Nothing will be written.`
      : `${name}: ${count(books, 'book')} will be added, in ${count(batches, 'batch', 'batches')}` +
        (skipped > 0 ? `; ${count(skipped, 'invalid row')} will be skipped (below).` : '; every row is valid.');
  showInvalid(file);
  ui.start.textContent = `Import ${count(books, 'book')}`;
  ui.start.hidden = books === 0;
  ui.preview.hidden = false;
}

function showInvalid(file: BookFile): void {
  const { invalid, positionName } = file;
  ui.invalid.hidden = invalid.length === 0;
  const where = positionName === 'line' ? 'Line' : 'Element';
  ui.invalidHeading.textContent = `${count(invalid.length, 'row is', 'rows are')} not valid and will not be imported`;
  ui.invalidList.replaceChildren(
    ...invalid.slice(0, INVALID_SHOWN).map(({ position, problems }) => {
      const item = document.createElement('li');
      const place = document.createElement('strong');
      place.textContent = `${where} ${position}:`;
      item.append(place, ` ${problems.join(' ')}`);
      return item;
    }),
  );
  const more = invalid.length - INVALID_SHOWN;
  ui.invalidMore.textContent = more > 0 ? `…and ${count(more, 'more invalid row')}, not shown. Correct the file and choose it again to check them.` : '';
}

ui.cancel.addEventListener('click', () => {
  choice++;
  prepared = undefined;
  ui.preview.hidden = true;
  ui.file.value = '';
  showInterrupted();
  ui.file.focus();
});

ui.start.addEventListener('click', () => {
  if (prepared) void start(prepared);
});

ui.resume.addEventListener('click', () => {
  if (stopped) void start(stopped);
});

// ---------------------------------------------------------------------------------------
// Importing: the batches in order, each until it is answered
// ---------------------------------------------------------------------------------------

/** runImport's `send`: POST /batch with the batch's own body and key. */
function sender(created: (ids: readonly string[]) => void) {
  return async (batch: ImportBatch, signal: AbortSignal | undefined): Promise<BatchAnswer> => {
    const answer = await authorized('POST', '/batch', new JsonText(batch.body), { 'idempotency-key': batch.idempotencyKey }, signal);
    // The session ended (expired, or a 401): the sign-in form is back; the import stops here.
    if (!answer) return { status: 401, message: 'your session ended', data: null, replayed: false };
    if (answer.status === 200 && Array.isArray(answer.data)) {
      created(answer.data.map((each: { data?: { id?: unknown } } | null) => each?.data?.id).filter((id): id is string => typeof id === 'string'));
    }
    return {
      status: answer.status,
      message: answer.message,
      data: answer.data,
      retryAfter: answer.retryAfter,
      replayed: answer.headers.get('idempotent-replayed') === 'true',
    };
  };
}

async function start(chosen: Prepared): Promise<void> {
  if (running) return;
  const { name, digest, plan, file } = chosen;
  const total = plan.batches.length;
  const controller = new AbortController();
  running = controller;
  prepared = undefined;
  stopped = undefined;
  choice++;
  ui.preview.hidden = true;
  ui.again.hidden = true;
  ui.note.textContent = '';
  ui.result.textContent = '';
  ui.error.textContent = '';
  ui.file.disabled = true;
  ui.running.hidden = false;
  ui.bar.max = total;
  ui.stop.disabled = false;
  ui.stop.focus();
  const earlier = importInterrupted();
  // Batches an earlier import of the same file is known to have applied: a reload now still says so.
  const known = earlier?.digest === digest ? earlier.done : 0;
  const progressed = (progress: ImportProgress) => {
    ui.bar.value = progress.batchesDone;
    const done = `${count(progress.booksDone)} of ${count(plan.books, 'book')} imported`;
    const retrying = progress.retrying;
    if (retrying) {
      const why = retrying.reason.startsWith('no answer') ? 'Connection lost' : `The service answered ${retrying.reason}`;
      ui.progress.textContent = `${why}, trying batch ${retrying.batch} again in ${seconds(retrying.waitMs)} (${done} so far).`;
    } else if (progress.batchesDone < total) {
      ui.progress.textContent = `Batch ${count(progress.batchesDone + 1)} of ${count(total)}, ${done}.`;
    }
    rememberImport({ name, digest, done: Math.max(known, progress.batchesDone), total });
    // A batch applied: the list shows its books (the feed's events of this import are the page's own).
    if (!retrying && progress.batchesDone > 0 && signedIn()) refresh();
  };
  progressed({ batchesDone: 0, batchesReplayed: 0, booksDone: 0 });
  try {
    const outcome = await ownImport((created) => runImport(plan, sender(created), { signal: controller.signal, onProgress: progressed }));
    const { progress } = outcome;
    if (outcome.kind === 'done') {
      rememberImport(undefined);
      const skipped = file.invalid.length;
      const replayed =
        progress.batchesReplayed === 0
          ? ''
          : ` ${count(progress.batchesReplayed)} of the ${count(total, 'batch', 'batches')} had already been imported (by an earlier import of this file, or before an answer was lost) and ${progress.batchesReplayed === 1 ? 'was' : 'were'} not written again.`;
      ui.result.textContent = `${count(plan.books, 'book')} imported from ${name}; ${count(skipped, 'row')} skipped.${replayed}`;
      announce(`Imported ${count(plan.books, 'book')} from ${name}.`);
    } else {
      stopped = chosen;
      const why =
        outcome.answer?.status === 401
          ? 'your session ended. Sign in again, then choose Continue the import'
          : outcome.reason.startsWith('no answer')
            ? 'the service could not be reached, after several tries'
            : `the service answered ${outcome.reason}`;
      ui.error.textContent =
        `The import of ${name} stopped at batch ${count(outcome.batch.number)} of ${count(total)} (${count(progress.booksDone)} of ${count(plan.books, 'book')} imported): ${why}. ` +
        'Choosing the same file again continues where it stopped, without creating any book twice.';
      ui.again.hidden = false;
    }
  } catch (error) {
    stopped = chosen;
    ui.again.hidden = false;
    const reason: unknown = controller.signal.reason;
    ui.error.textContent = controller.signal.aborted
      ? `${reason instanceof DOMException && reason.message === SIGNED_OUT ? `The import of ${name} stopped when you signed out` : `You stopped the import of ${name}`}. ` +
        'Choosing the same file again continues where it stopped, without creating any book twice.'
      : `${messageOf(error)} Choosing the same file again continues where the import stopped, without creating any book twice.`;
  } finally {
    running = undefined;
    ui.running.hidden = true;
    ui.progress.textContent = '';
    ui.file.disabled = false;
    // The same file can be chosen again (a browser sends no change for the same choice).
    ui.file.value = '';
    if (!ui.again.hidden) ui.resume.focus();
    else ui.file.focus();
    if (signedIn()) refresh();
  }
}

ui.stop.addEventListener('click', () => {
  ui.stop.disabled = true;
  running?.abort(new DOMException('Stopped by the person', 'AbortError'));
});
// Signing out stops the import before its next batch (app.ts's own handler runs first).
elements.signOut.addEventListener('click', () => running?.abort(new DOMException(SIGNED_OUT, 'AbortError')));

function seconds(ms: number): string {
  return `${(ms / 1000).toLocaleString('en', { maximumFractionDigits: 1 })} s`;
}

/** After a reload: an import this browser did not finish, and how to finish it. */
function showInterrupted(): void {
  const record = running ? undefined : importInterrupted();
  ui.note.textContent = record
    ? `An import of ${record.name} stopped after batch ${count(record.done)} of ${count(record.total)}; choose the same file to finish it.`
    : '';
}

// ---------------------------------------------------------------------------------------
// Export: the whole collection, downloaded as a file
// ---------------------------------------------------------------------------------------

ui.exportJson.addEventListener('click', () => void exportAs('json'));
ui.exportCsv.addEventListener('click', () => void exportAs('csv'));
// The page serves them disabled until this module has loaded and listens (index.html).
ui.exportJson.disabled = false;
ui.exportCsv.disabled = false;

async function exportAs(format: 'json' | 'csv'): Promise<void> {
  const buttons = [ui.exportJson, ui.exportCsv];
  for (const button of buttons) button.disabled = true;
  ui.exportError.textContent = '';
  ui.exportStatus.textContent = 'Reading the collection…';
  try {
    // Without parameters GET /books answers every book, by id (docs/api.md "GET /books").
    const answer = await authorized<unknown[]>('GET', '/books');
    if (!answer) {
      ui.exportStatus.textContent = '';
      return;
    }
    if (answer.status !== 200 || !Array.isArray(answer.data)) {
      ui.exportStatus.textContent = '';
      ui.exportError.textContent = describe(answer, 'The collection could not be exported');
      return;
    }
    const books = answer.data.map(asBook);
    if (books.some((book) => book === undefined)) {
      ui.exportStatus.textContent = '';
      ui.exportError.textContent = 'The collection could not be exported: the service answered a book the page cannot read.';
      return;
    }
    const all = books as Book[];
    const name = `books-${today()}.${format}`;
    download(format === 'json' ? booksAsJson(all) : booksAsCsv(all), name, format === 'json' ? 'application/json' : 'text/csv;charset=utf-8');
    ui.exportStatus.textContent = `Exported ${count(all.length, 'book')} as ${name}.`;
  } catch (error) {
    ui.exportStatus.textContent = '';
    ui.exportError.textContent = messageOf(error);
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

/** This computer's date, YYYY-MM-DD. */
function today(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
}

function download(text: string, name: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked once the download surely has the file.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

// Loaded: what a reload interrupted, and a file chosen while this was loading.
showInterrupted();
if (ui.file.files?.length) void choose();
