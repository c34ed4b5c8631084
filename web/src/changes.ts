// The change feed (GET /books/changes), read with fetch: EventSource cannot send the token. It is
// followed from the first list's Changes-Cursor, then by Last-Event-ID, opened again a second
// after it is lost; a cursor refused (400, 410) waits for a new list. Changes reach `handle` in
// batches, at most one per 150 ms, without this page's own writes.
import { asBook, readJson, type Answer } from './api.js';
import type { Book } from './books.js';
import { elements as ui } from './elements.js';
import { authorizedStream } from './sign-in.js';

export interface Change {
  kind: string;
  id: string;
  version: number;
  /** Undefined for a delete. */
  book: Book | undefined;
}

let handle: (changes: Change[]) => void = () => undefined;
let relist: () => void = () => undefined;
/** off (signed out), list (waits for a list's cursor), on. */
let mode = 'off';
let lastId = '';
let stream: AbortController | undefined;
let retryMs = 1000;
let retryTimer: number | undefined;
let batch: Change[] = [];
let batchTimer: number | undefined;
/** This page's writes: the ETags ("id-version") of those done, how many are on their way. */
const own = new Set<string>();
let writes = 0;

export function onChanges(changes: typeof handle, list: typeof relist): void {
  handle = changes;
  relist = list;
}

/** A write of this page; `etag` is a delete's If-Match (its answer has none). */
export async function ownWrite<T>(write: Promise<Answer<T> | undefined>, etag?: string): Promise<Answer<T> | undefined> {
  writes++;
  try {
    const answer = await write;
    if (answer && answer.status < 300) own.add(answer.etag ?? etag ?? '');
    return answer;
  } finally {
    writes--;
  }
}

/**
 * An import of this page (import-export.ts): the feed's events wait until it ends, and those of
 * the books it created (`created`, from each batch's answer; a new book's version is 1) are its
 * own, not "changes made elsewhere". The list is read again when it ends.
 */
export async function ownImport<T>(run: (created: (ids: readonly string[]) => void) => Promise<T>): Promise<T> {
  writes++;
  try {
    return await run((ids) => {
      for (const id of ids) own.add(`"${id}-1"`);
    });
  } finally {
    writes--;
  }
}

export function startFollowing(): void {
  stopFollowing();
  mode = 'list';
}

export function stopFollowing(): void {
  mode = 'off';
  stream?.abort();
  stream = undefined;
  window.clearTimeout(retryTimer);
  window.clearTimeout(batchTimer);
  batchTimer = undefined;
  batch = [];
  own.clear();
  ui.feedStatus.textContent = '';
}

/** A list answer's Changes-Cursor. */
export function listed(cursor: string | null): void {
  if (mode !== 'list' || !cursor) return;
  mode = 'on';
  lastId = cursor;
  void connect(`?after=${encodeURIComponent(cursor)}`);
}

async function connect(query = ''): Promise<void> {
  const controller = new AbortController();
  stream = controller;
  try {
    const response = await authorizedStream(`/books/changes${query}`, query ? {} : { 'last-event-id': lastId }, controller.signal);
    if (!response || stream !== controller) return;
    if (response.status === 400 || response.status === 410) {
      mode = 'list';
      return relist();
    }
    if (response.status === 200 && response.body) {
      ui.feedStatus.textContent = '';
      await read(response.body.pipeThrough(new TextDecoderStream()).getReader());
    }
  } catch {
    // Lost: opened again below.
  }
  if (stream !== controller) return;
  ui.feedStatus.textContent = 'Connection to the service lost: reconnecting…';
  retryTimer = window.setTimeout(() => void connect(), retryMs);
}

async function read(reader: ReadableStreamDefaultReader<string>): Promise<void> {
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    text += value.replace(/\r\n?/g, '\n');
    let end;
    while ((end = text.indexOf('\n\n')) >= 0) {
      event(text.slice(0, end));
      text = text.slice(end + 2);
    }
  }
}

/** One event's lines; a comment (`: heartbeat`) matches no field. */
function event(block: string): void {
  let kind = '';
  let data: string | undefined;
  for (const line of block.split('\n')) {
    const [, field, value = ''] = /^([^:]+):? ?(.*)$/.exec(line) ?? [];
    if (field === 'id') lastId = value;
    else if (field === 'event') kind = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
    else if (field === 'data') data = data === undefined ? value : `${data}\n${value}`;
  }
  if (data === undefined) return;
  const sent = readJson(data) as { id?: unknown; version?: unknown };
  const { id, version } = sent;
  if (typeof id !== 'string' || typeof version !== 'number') return;
  batch.push({ kind, id, version, book: kind === 'deleted' ? undefined : asBook(sent) });
  batchTimer ??= window.setTimeout(flush, 150);
}

/** Once no write of this page is on its way: the answer to a write may come after its event. */
function flush(): void {
  batchTimer = writes > 0 ? window.setTimeout(flush, 150) : undefined;
  if (batchTimer !== undefined) return;
  const news = batch.splice(0).filter((change) => !own.delete(`"${change.id}-${change.version}"`));
  if (news.length > 0) handle(news);
}
