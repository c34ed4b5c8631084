// GET /books's answer: every book, id ascending, in the envelope (or, with `sort` or `q` and no
// `limit`, every book they match: matchingPieces). The store writes each page's
// books as JSON (BookStore.listPageJson); here they are put in the envelope and, past one store
// page, streamed page by page, so memory stays bounded whatever the collection's size. A list
// shorter than one page is one Buffer (sent with Content-Length).
//
// The bytes are what the route's response schema describes (the serializer is not run on a
// stream): the envelope around each book exactly as bookJson() (src/books/book.ts) writes it.
// That is BookStore.listPageJson's promise, which test/stores/book-definition.test.ts checks
// for every store.
import { bookJson } from '../books/book.js';
import { sortValueOf, type BookQuery } from '../books/book-query.js';
import type { BookPage, BookStore } from '../store/book-store.js';
import { Messages } from './envelope.js';

/** Rows per store query when listing; also the size from which the list is streamed. */
export const LIST_PAGE_SIZE = 1000;

export const LIST_PREFIX = `{"status":200,"message":${JSON.stringify(Messages.booksRetrieved)},"data":[`;
export const LIST_SUFFIX = Buffer.from(']}');

/** One answer: the whole body (a short list), or its pieces to stream. */
export type ListAnswer = { kind: 'whole'; body: Buffer } | { kind: 'streamed'; chunks(): AsyncIterable<Buffer> };

/** What the GET /books route asks for its answers (a speed path may share them between requests). */
export interface BookListAnswers {
  /** The answer for one list request. */
  answer(): Promise<ListAnswer>;
  /** How many answers were serialized (book_list_answers_serialized_total). */
  readonly serialized: number;
}

/** Makes a piece's bytes: the page's JSON between `before` and `after` (a speed path may reuse earlier bytes). */
export type PieceBytes = (place: string, json: string, before: string, after: string) => Buffer;

const freshBytes: PieceBytes = (_place, json, before, after) => Buffer.from(before + json + after);

/** Each list request reads and serializes its own answer. */
export function listAnswers(store: BookStore): BookListAnswers {
  let serialized = 0;
  return {
    async answer() {
      serialized += 1;
      const first = await store.listPageJson(0n, LIST_PAGE_SIZE);
      if (isLastPage(first)) return { kind: 'whole', body: freshBytes('whole', first.json, LIST_PREFIX, ']}') };
      return { kind: 'streamed', chunks: () => listPieces(store, freshBytes, first) };
    },
    get serialized() {
      return serialized;
    },
  };
}

/** Whether no page follows this one. */
export function isLastPage(page: BookPage): boolean {
  return page.count < LIST_PAGE_SIZE || page.lastId === undefined;
}

/**
 * The list's pieces from a point on: the envelope's head with `first` (the first page, read
 * already) or, when `after` is given, the pages after that book id; each further page (a comma,
 * then its books); the tail.
 */
export async function* listPieces(store: BookStore, bytesOf: PieceBytes, first?: BookPage, after?: bigint): AsyncGenerator<Buffer> {
  let page = first ?? (await store.listPageJson(after ?? 0n, LIST_PAGE_SIZE));
  let from = after;
  if (from === undefined) yield bytesOf(isLastPage(page) ? 'head-short' : 'head', page.json, LIST_PREFIX, '');
  else if (page.count > 0) yield bytesOf(`after ${from}`, page.json, ',', '');
  if (!isLastPage(page) && store.streamListJson) {
    // A speed path reads the rest in larger pieces (BookStore.streamListJson).
    for await (const piece of store.streamListJson(page.lastId!)) yield piece.bytes;
    yield LIST_SUFFIX;
    return;
  }
  while (!isLastPage(page)) {
    from = page.lastId!;
    page = await store.listPageJson(from, LIST_PAGE_SIZE);
    if (page.count > 0) yield bytesOf(`after ${from}`, page.json, ',', '');
  }
  yield LIST_SUFFIX;
}

/**
 * Every book a query matches, in its order (GET /books with `sort` or `q` and no `limit`): the
 * envelope's head, each store page of books (a comma between pages), the tail. Each page starts
 * after the last book of the one before (keyset), so memory stays bounded here too.
 */
export async function* matchingPieces(store: BookStore, query: Omit<BookQuery, 'limit'>): AsyncGenerator<Buffer> {
  yield Buffer.from(LIST_PREFIX);
  let after = query.after;
  let separator = '';
  for (;;) {
    const { books } = await store.findBooks({ ...query, after, limit: LIST_PAGE_SIZE });
    if (books.length > 0) yield Buffer.from(separator + books.map(bookJson).join(','));
    const last = books.at(-1);
    if (last === undefined || books.length < LIST_PAGE_SIZE) break;
    after = { value: sortValueOf(last, query.sort.field), id: last.id };
    separator = ',';
  }
  yield LIST_SUFFIX;
}
