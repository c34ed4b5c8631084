// GET /books's parameters (`limit`, `cursor`, `sort`, `q`), read from the query string: what
// the client asks of the list, or the 400 message for the first bad value. Without any of
// them the list is the interface's own: every book, by id. Parameters are read here, not by a
// schema, so that each bad value has its own fixed message (docs/api.md "GET /books").
import { BY_ID, SEARCH_MAX_LENGTH, SEARCH_MAX_TERMS, SORT_FIELDS, searchTerms, type BookSort, type KeysetPosition, type SortField } from '../books/book-query.js';
import { Messages, type Message } from './envelope.js';
import type { ListCursors } from './list-cursor.js';

/** The most books one page may hold, and the limit's range. */
export const MAX_PAGE_LIMIT = 1000;

export interface ListRequest {
  sort: BookSort;
  terms: string[];
  /** Where the page starts (from `cursor`); the list's start when absent. */
  after: KeysetPosition | undefined;
  /** Books in the page; every matching book when absent. */
  limit: number | undefined;
  /** The parameters as the client wrote them, for the next page's link. */
  given: { sort?: string; q?: string };
}

/** The interface's own list (no parameters), or a list the parameters ask for, or a bad value's message. */
export type ListParameters = { kind: 'all' } | { kind: 'query'; request: ListRequest } | { kind: 'invalid'; message: Message };

const PARAMETERS = ['limit', 'cursor', 'sort', 'q'] as const;

export function readListParameters(query: Record<string, unknown>, cursors: ListCursors): ListParameters {
  if (!PARAMETERS.some((name) => query[name] !== undefined)) return { kind: 'all' };
  const invalid = (message: Message): ListParameters => ({ kind: 'invalid', message });
  // A parameter given twice (an array) is a bad value of that parameter.
  const { limit: rawLimit, cursor, sort: rawSort, q } = query;

  let limit: number | undefined;
  if (rawLimit !== undefined) {
    limit = typeof rawLimit === 'string' && /^[0-9]{1,4}$/.test(rawLimit) ? Number(rawLimit) : NaN;
    if (!(limit >= 1 && limit <= MAX_PAGE_LIMIT)) return invalid(Messages.invalidLimit);
  }

  let sort = BY_ID;
  if (rawSort !== undefined) {
    const parsed = typeof rawSort === 'string' ? sortOf(rawSort) : undefined;
    if (!parsed) return invalid(Messages.invalidSort);
    sort = parsed;
  }

  let terms: string[] = [];
  if (q !== undefined) {
    if (typeof q !== 'string' || [...q].length > SEARCH_MAX_LENGTH) return invalid(Messages.invalidSearch);
    terms = searchTerms(q);
    if (terms.length > SEARCH_MAX_TERMS) return invalid(Messages.invalidSearch);
  }

  let after: KeysetPosition | undefined;
  if (cursor !== undefined) {
    const reading = typeof cursor === 'string' ? cursors.read(cursor, sort, terms) : 'not-issued';
    if (reading === 'not-issued') return invalid(Messages.cursorNotIssued);
    if (reading === 'other-list') return invalid(Messages.cursorForOtherList);
    after = reading;
  }

  const given: ListRequest['given'] = {};
  if (typeof rawSort === 'string') given.sort = rawSort;
  if (typeof q === 'string' && terms.length > 0) given.q = q;
  return { kind: 'query', request: { sort, terms, after, limit, given } };
}

/** `title`, `-year`, …: a sort field, descending when prefixed by `-`. */
function sortOf(text: string): BookSort | undefined {
  const descending = text.startsWith('-');
  const field = descending ? text.slice(1) : text;
  return (SORT_FIELDS as readonly string[]).includes(field) ? { field: field as SortField, descending } : undefined;
}

/** The URL of the page after this one (the `Link: <…>; rel="next"` header): the same list, from `cursor`. */
export function nextPageUrl(request: ListRequest, limit: number, cursor: string): string {
  const parameters = new URLSearchParams({ limit: String(limit) });
  if (request.given.sort !== undefined) parameters.set('sort', request.given.sort);
  if (request.given.q !== undefined) parameters.set('q', request.given.q);
  parameters.set('cursor', cursor);
  return `/books?${parameters.toString().replaceAll('+', '%20')}`;
}
