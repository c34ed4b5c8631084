// Importing books through POST /batch, for the web page and `book-service import FILE` alike:
// the rows are cut into batches (at most BATCH_MAX_OPERATIONS creates and IMPORT_BATCH_MAX_BYTES
// of JSON each), and each batch is sent with an Idempotency-Key made of the file's digest and the
// batch's place. So an import cut midway (a lost connection, a closed page, a killed command)
// is finished by importing the same file again: the batches already applied are answered from
// the service's stored answers (`Idempotent-Replayed: true`) and create nothing twice, as long
// as the keys live (IDEMPOTENCY_TTL, a day by default). Compiled for the browser too
// (web/tsconfig.json), so it imports nothing outside src/books/ and uses only web APIs.
import { BATCH_MAX_OPERATIONS } from './book.js';
import type { BookRow } from './book-file.js';

/** A batch's JSON stays under this, well within POST /batch's 4 MiB body limit. */
export const IMPORT_BATCH_MAX_BYTES = 3 * 1024 * 1024;

export interface ImportBatch {
  /** From 1. */
  number: number;
  rows: BookRow[];
  /** The POST /batch body (written when read). */
  readonly body: string;
  idempotencyKey: string;
}

export interface ImportPlan {
  batches: ImportBatch[];
  books: number;
}

/**
 * The batches that import `rows`, keyed by `digest` (fileDigest()). A batch's body is written
 * when it is read, so a million rows are held once, not twice more as batches of text.
 */
export function planImport(rows: readonly BookRow[], digest: string): ImportPlan {
  const bounds: number[] = [0];
  let bytes = 0;
  rows.forEach((row, index) => {
    const size = utf8Length(operationJson(row)) + 1;
    const start = bounds.at(-1)!;
    if (index - start === BATCH_MAX_OPERATIONS || (index > start && bytes + size > IMPORT_BATCH_MAX_BYTES)) {
      bounds.push(index);
      bytes = 0;
    }
    bytes += size;
  });
  if (rows.length > bounds.at(-1)!) bounds.push(rows.length);
  const count = bounds.length - 1;
  const batches = Array.from({ length: count }, (_, index): ImportBatch => {
    const batchRows = rows.slice(bounds[index], bounds[index + 1]);
    return {
      number: index + 1,
      rows: batchRows,
      get body() {
        return `{"operations":[${batchRows.map(operationJson).join(',')}]}`;
      },
      idempotencyKey: `import-${digest}-${index + 1}-of-${count}`,
    };
  });
  return { batches, books: rows.length };
}

function operationJson(row: BookRow): string {
  return `{"method":"POST","path":"/book","body":${JSON.stringify(row.fields)}}`;
}

/** Bytes of `text` in UTF-8, without encoding it. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const unit = text.charCodeAt(index);
    if (unit < 0x80) bytes += 1;
    else if (unit < 0x800) bytes += 2;
    else if (unit >= 0xd800 && unit <= 0xdbff) {
      bytes += 4; // a surrogate pair: one code point of four bytes
      index += 1;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The file's identity in its batches' keys: 32 hex digits of its SHA-256. Where a browser offers
 * no SHA-256 (crypto.subtle exists only on HTTPS and localhost pages), a 64-bit hash of the text
 * stands in, prefixed `h`: enough to tell one person's files apart, not a checksum.
 */
export async function fileDigest(file: string): Promise<string> {
  // A browser's File.text() drops a leading BOM and Node's readFile keeps it: the same file, the same keys.
  const text = file.charCodeAt(0) === 0xfeff ? file.slice(1) : file;
  const subtle = globalThis.crypto?.subtle;
  if (subtle === undefined) return `h${textHash(text, 0x9e3779b9)}${textHash(text, 0x85ebca6b)}`;
  const digest = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return [...digest.subarray(0, 16)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** FNV-1a over UTF-16 units with a seed: 8 hex digits. */
function textHash(text: string, seed: number): string {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  for (let index = 0; index < text.length; index += 1) hash = Math.imul(hash ^ text.charCodeAt(index), 0x01000193) >>> 0;
  return hash.toString(16).padStart(8, '0');
}

/** What the service answered a batch (the envelope), or that it could not be reached (thrown). */
export interface BatchAnswer {
  status: number;
  message: string;
  data: unknown;
  /** Seconds from Retry-After, if any. */
  retryAfter?: number | undefined;
  /** `Idempotent-Replayed: true`: the batch had been applied before (an earlier, cut import). */
  replayed: boolean;
}

/** Sends one batch: POST /batch with the body and the key. Throws when no answer came. */
export type SendBatch = (batch: ImportBatch, signal: AbortSignal | undefined) => Promise<BatchAnswer>;

export interface ImportProgress {
  /** Batches answered 200 so far, and of them, those applied by an earlier import of the file. */
  batchesDone: number;
  batchesReplayed: number;
  booksDone: number;
  /** Set while a batch waits to be sent again, with why. */
  retrying?: { batch: number; attempt: number; reason: string; waitMs: number };
}

export type ImportOutcome =
  | { kind: 'done'; progress: ImportProgress }
  /** Stopped at `batch` for `reason`; what was done is kept, and importing the file again goes on from there. */
  | { kind: 'stopped'; progress: ImportProgress; batch: ImportBatch; reason: string; answer?: BatchAnswer };

export interface ImportOptions {
  onProgress?: (progress: ImportProgress) => void;
  signal?: AbortSignal;
  /** Tries of one batch before the import stops (a lost connection, a 503, a 409 of a repeat still running). */
  attempts?: number;
  /** The wait before the second try; doubled each time, at most 30 s (a Retry-After wins). */
  firstWaitMs?: number;
}

/** Answers worth sending the same batch again: it was not applied, or its first send still runs. */
const RETRYABLE = new Set([409, 429, 502, 503, 504]);

/** Sends the plan's batches in order, each until it is answered 200 or the tries run out. */
export async function runImport(plan: ImportPlan, send: SendBatch, options: ImportOptions = {}): Promise<ImportOutcome> {
  const { onProgress, signal, attempts = 8, firstWaitMs = 500 } = options;
  const progress: ImportProgress = { batchesDone: 0, batchesReplayed: 0, booksDone: 0 };
  for (const batch of plan.batches) {
    const sent = await sendUntilAnswered(batch, send, { signal, attempts, firstWaitMs }, (retrying) => {
      progress.retrying = retrying;
      onProgress?.(progress);
    });
    delete progress.retrying;
    if (sent.kind === 'failed') return { kind: 'stopped', progress, batch, reason: sent.reason, ...(sent.answer && { answer: sent.answer }) };
    progress.batchesDone += 1;
    progress.booksDone += batch.rows.length;
    if (sent.answer.replayed) progress.batchesReplayed += 1;
    onProgress?.(progress);
  }
  return { kind: 'done', progress };
}

type Sent = { kind: 'applied'; answer: BatchAnswer } | { kind: 'failed'; reason: string; answer?: BatchAnswer };

async function sendUntilAnswered(
  batch: ImportBatch,
  send: SendBatch,
  { signal, attempts, firstWaitMs }: { signal: AbortSignal | undefined; attempts: number; firstWaitMs: number },
  onRetry: (retrying: NonNullable<ImportProgress['retrying']>) => void,
): Promise<Sent> {
  for (let attempt = 1; ; attempt += 1) {
    let answer: BatchAnswer | undefined;
    let reason: string;
    try {
      answer = await send(batch, signal);
      if (answer.status === 200) return { kind: 'applied', answer };
      reason = `${answer.status} ${answer.message}${notAppliedDetail(batch, answer)}`;
    } catch (error) {
      if (signal?.aborted) throw error;
      reason = `no answer (${error instanceof Error ? error.message : String(error)})`;
    }
    const retryable = answer === undefined || RETRYABLE.has(answer.status);
    if (!retryable || attempt >= attempts) return { kind: 'failed', reason, ...(answer && { answer }) };
    const waitMs = answer?.retryAfter !== undefined ? answer.retryAfter * 1000 : Math.min(firstWaitMs * 2 ** (attempt - 1), 30_000);
    onRetry({ batch: batch.number, attempt, reason, waitMs });
    await wait(waitMs, signal);
  }
}

/** For a 422 `Batch not applied`: the row the refused operation came from, and the service's reason. */
function notAppliedDetail(batch: ImportBatch, answer: BatchAnswer): string {
  const data = answer.data as { operation?: unknown; status?: unknown; message?: unknown } | null;
  if (answer.status !== 422 || typeof data?.operation !== 'number') return '';
  const row = batch.rows[data.operation];
  return `: the book at position ${row?.position ?? '?'} was refused (${String(data.status)} ${String(data.message)})`;
}

function wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}
