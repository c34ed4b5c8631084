// POST /batch's body read into operations (docs/api.md "POST /batch"): each operation is written
// as the single request it stands for, `{"method", "path", "body", "headers": {"If-Match"}}`, and
// is checked as that request would be. A batch that cannot be read (not a list of 1 to
// BATCH_MAX_OPERATIONS operations, an operation that is not one, an unknown method or path, a
// batch inside the batch) is a 400 of the batch's own; an operation that is a request but would
// be refused on its own (an invalid book, a bad If-Match, an id that names no book) fails the
// batch with that operation's own answer (422, src/routes/books.ts). Nothing is written either way.
import { Compile } from 'typebox/compile';
import type { BookFields } from '../books/book.js';
import { BATCH_MAX_OPERATIONS } from '../books/book.js';
import { parseBookId } from '../books/book-id.js';
import { CreateBookBody, UpdateBookBody } from '../schemas/book.js';
import type { BatchOperation } from '../store/book-store.js';
import { ifMatchVersions, isWellFormedCondition } from './conditional-requests.js';
import { Messages, type Message } from './envelope.js';

/** The largest body POST /batch reads (1,000 operations of the longest books fit). */
export const BATCH_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/** What a batch body reads as. */
export type ReadBatch =
  | { kind: 'batch'; operations: BatchOperation[] }
  /** The batch cannot be read: a 400, with the operation at fault if one is. */
  | { kind: 'invalid'; message: Message; operation?: number }
  /** An operation that would be refused on its own: the batch fails with its answer. */
  | { kind: 'refused'; operation: number; status: number; message: Message };

const validCreate = Compile(CreateBookBody);
const validUpdate = Compile(UpdateBookBody);
const OPERATION_FIELDS = new Set(['method', 'path', 'body', 'headers']);
const BOOK_PATH = /^\/book(?:\/([^/?#]*))?$/;

export function readBatch(body: unknown): ReadBatch {
  const operations = (body as { operations?: unknown } | null)?.operations;
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > BATCH_MAX_OPERATIONS) {
    return { kind: 'invalid', message: Messages.invalidBatch };
  }
  const read: BatchOperation[] = [];
  for (const [index, operation] of operations.entries()) {
    const one = readOperation(operation);
    if ('message' in one) return { ...one, operation: index } as ReadBatch;
    read.push(one);
  }
  return { kind: 'batch', operations: read };
}

function readOperation(operation: unknown): BatchOperation | Omit<Extract<ReadBatch, { kind: 'invalid' }>, 'operation'> | Omit<Extract<ReadBatch, { kind: 'refused' }>, 'operation'> {
  const malformed = { kind: 'invalid', message: Messages.invalidBatchOperation } as const;
  if (typeof operation !== 'object' || operation === null || Array.isArray(operation)) return malformed;
  if (Object.keys(operation).some((key) => !OPERATION_FIELDS.has(key))) return malformed;
  const { method, path, body, headers } = operation as Record<string, unknown>;
  if (typeof method !== 'string' || typeof path !== 'string') return malformed;
  if (path === '/batch' || path.startsWith('/batch?')) return { kind: 'invalid', message: Messages.nestedBatch };
  const match = BOOK_PATH.exec(path);
  const rawId = match?.[1];
  const known = match && ((method === 'POST' && rawId === undefined) || ((method === 'PUT' || method === 'DELETE') && rawId !== undefined));
  if (!known) return { kind: 'invalid', message: Messages.unknownBatchOperation };
  let ifMatch: string | undefined;
  if (headers !== undefined) {
    if (typeof headers !== 'object' || headers === null || Array.isArray(headers)) return malformed;
    for (const [name, value] of Object.entries(headers)) {
      if (name.toLowerCase() !== 'if-match' || typeof value !== 'string' || method === 'POST') return malformed;
      ifMatch = value;
    }
  }
  if (ifMatch !== undefined && !isWellFormedCondition(ifMatch)) return { kind: 'refused', status: 400, message: Messages.invalidIfMatch };
  if (method === 'POST') {
    if (!validCreate.Check(body)) return { kind: 'refused', status: 400, message: Messages.invalidBook };
    const { title, author, year } = body as BookFields;
    return { kind: 'create', fields: { title, author, year } };
  }
  const id = parseBookId(rawId);
  if (id === undefined) return { kind: 'refused', status: 404, message: Messages.bookNotFound };
  const ifVersion = ifMatch === undefined ? undefined : ifMatchVersions(ifMatch, id);
  if (method === 'DELETE') return { kind: 'delete', id, ifVersion };
  if (!validUpdate.Check(body)) return { kind: 'refused', status: 400, message: Messages.invalidBook };
  const { title, author, year } = body as Partial<BookFields>;
  const changes: Partial<BookFields> = {};
  if (title !== undefined) changes.title = title;
  if (author !== undefined) changes.author = author;
  if (year !== undefined) changes.year = year;
  return { kind: 'update', id, changes, ifVersion };
}
