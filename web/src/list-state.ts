// Which page of the list is shown: the sort, the filter text, the page size and the cursors that
// led to it. GET /books pages by keyset (docs/api.md, list parameters): a page is named by an
// opaque cursor from the previous page's `Link: <…>; rel="next"`, never by an offset, so going
// back a page means remembering the cursors that led here. The state lives in the URL's fragment
// (`#sort=-year&q=tolk&size=50&page=3&cursor=…&cursor=…`) so a link reopens the same page, and
// Back/Forward walk the pages. Pure functions, no DOM: test/web/list-state.test.ts checks them.
import type { Column } from './books.js';

export const PAGE_SIZES = [20, 50, 100] as const;
export const DEFAULT_PAGE_SIZE = 50;
const SORT_COLUMNS: readonly Column[] = ['id', 'title', 'author', 'year'];
/** The service's limit on `q` (longer is a 400); the filter box holds no more. */
export const FILTER_MAX_LENGTH = 200;

export interface ListState {
  column: Column;
  descending: boolean;
  /** The filter text as typed (the service splits it into terms). */
  q: string;
  size: number;
  /**
   * The cursors of the pages before this one and of this one, oldest first: page 1 has none.
   * A link may carry only the last few; `skipped` counts the pages before them whose cursors
   * are unknown, so the page number stays right.
   */
  cursors: readonly string[];
  skipped: number;
}

export const FIRST_PAGE: ListState = { column: 'id', descending: false, q: '', size: DEFAULT_PAGE_SIZE, cursors: [], skipped: 0 };

/** The page number, from 1. */
export function pageNumber(state: ListState): number {
  return state.cursors.length === 0 ? 1 : state.skipped + state.cursors.length + 1;
}

/** The same sort, filter and size, page 1. */
export function firstPageOf(state: ListState): ListState {
  return { ...state, cursors: [], skipped: 0 };
}

/** The page after this one, reached by `cursor` (from this page's Link header). */
export function nextPage(state: ListState, cursor: string): ListState {
  return { ...state, cursors: [...state.cursors, cursor] };
}

/** The page before this one; page 1 if the cursor that led there is not known. */
export function previousPage(state: ListState): ListState {
  if (state.cursors.length <= 1) return firstPageOf(state);
  return { ...state, cursors: state.cursors.slice(0, -1) };
}

/** What the service is asked for: `sort` as `title` or `-title`. */
export function sortParameter(state: Pick<ListState, 'column' | 'descending'>): string {
  return `${state.descending ? '-' : ''}${state.column}`;
}

/** GET /books for this page (`limit` books). */
export function listPath(state: ListState, limit = state.size): string {
  const params = new URLSearchParams({ limit: String(limit), sort: sortParameter(state) });
  if (state.q.trim() !== '') params.set('q', state.q.trim());
  const cursor = state.cursors.at(-1);
  if (cursor !== undefined) params.set('cursor', cursor);
  return `/books?${params}`;
}

/** The fragment for `state`; the defaults are left out so the plain page has none. */
export function toFragment(state: ListState): string {
  const params = new URLSearchParams();
  if (state.column !== 'id' || state.descending) params.set('sort', sortParameter(state));
  if (state.q !== '') params.set('q', state.q);
  if (state.size !== DEFAULT_PAGE_SIZE) params.set('size', String(state.size));
  if (state.cursors.length > 0) {
    params.set('page', String(pageNumber(state)));
    for (const cursor of state.cursors) params.append('cursor', cursor);
  }
  const text = params.toString();
  return text === '' ? '' : `#${text}`;
}

/** Whether a fragment is the list's (and not, say, the skip link's `#books-heading`). */
export function isListFragment(fragment: string): boolean {
  const text = fragment.replace(/^#/, '');
  return text === '' || text.includes('=');
}

/**
 * The state a fragment names. Anything unreadable falls back to its default (an unknown sort
 * to id, a page size not offered to 50), so an edited link never makes a request the service
 * would refuse, except for a cursor: only the service can tell whether it issued one.
 */
export function fromFragment(fragment: string): ListState {
  const params = new URLSearchParams(fragment.replace(/^#/, ''));
  const sort = params.get('sort') ?? '';
  const column = sort.replace(/^-/, '') as Column;
  const known = SORT_COLUMNS.includes(column);
  const size = Number(params.get('size'));
  const cursors = params.getAll('cursor').filter((cursor) => cursor !== '');
  const page = Number(params.get('page'));
  // A link may name page 7 with only its last cursors: the pages before them are counted, not known.
  const skipped = cursors.length > 0 && Number.isSafeInteger(page) && page > cursors.length + 1 ? page - cursors.length - 1 : 0;
  return {
    column: known ? column : 'id',
    descending: known && sort.startsWith('-'),
    q: (params.get('q') ?? '').slice(0, FILTER_MAX_LENGTH),
    size: (PAGE_SIZES as readonly number[]).includes(size) ? size : DEFAULT_PAGE_SIZE,
    cursors,
    skipped,
  };
}

/**
 * The cursor of the next page, from a `Link` header (RFC 8288): the target of the link whose
 * `rel` includes `next`, whose query's `cursor` is taken. Undefined on the last page.
 */
export function nextCursor(link: string | null | undefined): string | undefined {
  if (!link) return undefined;
  for (const [, target, parameters] of link.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,]+))/i.exec(parameters ?? '');
    const relations = (rel?.[1] ?? rel?.[2] ?? '').toLowerCase().split(/\s+/);
    if (!relations.includes('next') || target === undefined) continue;
    const query = target.includes('?') ? target.slice(target.indexOf('?') + 1) : '';
    const cursor = new URLSearchParams(query).get('cursor');
    if (cursor) return cursor;
  }
  return undefined;
}

/** How many books match, as the first page's headers say: exact, or the database's estimate. */
export interface Total {
  count: number;
  estimate: boolean;
}

export function totalFrom(exact: string | null, estimate: string | null): Total | undefined {
  for (const [text, isEstimate] of [
    [exact, false],
    [estimate, true],
  ] as const) {
    if (text !== null && /^\d+$/.test(text.trim())) return { count: Number(text.trim()), estimate: isEstimate };
  }
  return undefined;
}
