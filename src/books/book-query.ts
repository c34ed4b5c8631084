// What a client may ask of the list (GET /books with `limit`, `cursor`, `sort`, `q`): the order,
// the search terms, where a page starts, and how many books it holds. The HTTP side reads it
// from the request (src/http/list-query.ts); the stores answer it with indexes
// (src/store/book-query.ts). Like book.ts, this file imports nothing.

/** The columns a list can be sorted by. */
export const SORT_FIELDS = ['id', 'title', 'author', 'year'] as const;
export type SortField = (typeof SORT_FIELDS)[number];

/** An order of the list: by one column, then by id in the same direction, so it is total. */
export interface BookSort {
  field: SortField;
  descending: boolean;
}

export const BY_ID: BookSort = { field: 'id', descending: false };

/** The value a book has in the sort's column: text, a year, or its id. */
export type SortValue = string | number | bigint;

/** Where a page starts: after the book with this id, which has `value` in the sort's column. */
export interface KeysetPosition {
  value: SortValue;
  id: bigint;
}

export interface BookQuery {
  sort: BookSort;
  /** Search terms, each lower-case letters and digits only; a book matches when each term starts one of its words. */
  terms: readonly string[];
  /** The page starts after this book; the first page when absent. */
  after?: KeysetPosition;
  /** At most this many books. */
  limit: number;
  /** Whether to say how many books match in all (the first page's X-Total-Count). */
  counted?: boolean;
}

/** `q` may hold at most this many characters… */
export const SEARCH_MAX_LENGTH = 200;
/** …and this many terms. */
export const SEARCH_MAX_TERMS = 10;

/**
 * A search text's terms: split at anything that is not a letter or a digit, lower-cased, each
 * term once. `J.R.R. Tolkien` → `j`, `r`, `tolkien`. No terms (empty, or only punctuation)
 * means no filter.
 */
export function searchTerms(text: string): string[] {
  const words = text.toLowerCase().split(/[^\p{L}\p{N}]+/u);
  return [...new Set(words.filter((word) => word !== ''))];
}

/** A book's value in the sort's column. */
export function sortValueOf(book: { id: bigint; title: string; author: string; year: number }, field: SortField): SortValue {
  return book[field];
}
