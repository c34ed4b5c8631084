// What a book is: its fields, their types and limits, and its JSON shape. The request and
// response schemas, the table's columns and every JSON writer (the stores' included) follow
// from this file; test/stores/book-definition.test.ts (tables, stores' JSON) and the OpenAPI
// tests (schemas) fail when one of them drifts from it. The web page checks a book against the
// same limits (web/src/books.ts): this file is also compiled for the browser (web/tsconfig.json),
// so it imports nothing.

/** The fields a client writes, in the order the JSON shape lists them after `id`. */
export const BOOK_FIELDS = ['title', 'author', 'year'] as const;

/** Every stored column, in JSON order: `{"id":…,"title":…,"author":…,"year":…}`. */
export const BOOK_COLUMNS = ['id', ...BOOK_FIELDS] as const;

/** `title` and `author`: 1 to this many characters (Unicode code points, as JSON Schema and the databases count them). */
export const BOOK_TEXT_MAX_LENGTH = 500;
export const BOOK_YEAR_MIN = -9999;
export const BOOK_YEAR_MAX = 9999;

/** Most operations (creates, updates, deletes of books) one POST /batch may hold; an import sends batches of at most this many. */
export const BATCH_MAX_OPERATIONS = 1_000;

/** Ids are signed 64-bit integers in every store; 0 and negatives are never assigned. */
export const MAX_BOOK_ID = 2n ** 63n - 1n;

export interface BookFields {
  title: string;
  author: string;
  year: number;
}

/** A stored book. Ids travel as `bigint` inside the service, so ids above 2^53 stay exact. */
export interface StoredBook extends BookFields {
  id: bigint;
}

/**
 * A stored book with its version: a number the store sets to 1 when the book is created and
 * raises by one on every write of it. The book's ETag is made of its id and version
 * (src/http/conditional-requests.ts); the version never appears in a book's JSON.
 */
export interface VersionedBook extends StoredBook {
  version: number;
}

/** A book's JSON text, as every response carries it: keys in BOOK_COLUMNS order, the id's exact digits. */
export function bookJson(book: StoredBook): string {
  return `{"id":${book.id},"title":${JSON.stringify(book.title)},"author":${JSON.stringify(book.author)},"year":${book.year}}`;
}
