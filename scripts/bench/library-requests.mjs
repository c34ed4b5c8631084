// The requests of the library-scale phase (docs/api.md: GET /books with limit, sort, q, cursor)
// and their checks: whether the service pages at all; a page of LIBRARY_PAGE by id, by -year,
// by title and for a two-term search; the deep pages, whose cursors are found by walking the
// Link headers as a client would (the cursor is opaque); one answer of each checked before load.
import { performance } from 'node:perf_hooks';
import { URL, URLSearchParams } from 'node:url';
import { request } from './client.mjs';
import { LIBRARY_DEEP_SHARE, LIBRARY_PAGE, LIBRARY_WALK_PAGE } from './settings.mjs';

/** The orders measured, as `sort` says them; each has a first page and a deep page. */
const SORTS = [
  { sort: 'id', field: 'id', descending: false },
  { sort: '-year', field: 'year', descending: true },
  { sort: 'title', field: 'title', descending: false },
];

const pagePath = (params) => `/books?${new URLSearchParams({ limit: String(LIBRARY_PAGE), ...params })}`;

/** The path of the Link header's rel="next" target, or null (the last page). */
export function nextLink(headers) {
  const match = /<([^>]*)>\s*;\s*rel="?next"?/.exec(headers.link ?? '');
  return match ? match[1] : null;
}

/** Whether the service pages (limit=1 gives one book and a Link), or ignores the parameters. */
export async function honoursListParameters(port, token) {
  const response = await request(port, 'GET', '/books?limit=1', { token });
  return response.status === 200 && response.json?.data?.length === 1 && nextLink(response.headers) !== null;
}

/** Whether `books` are in the order `sort` says (ties by id in the same direction). */
function inOrder(books, { field, descending }) {
  for (let i = 1; i < books.length; i += 1) {
    const [a, b] = [books[i - 1], books[i]];
    const before = a[field] === b[field] ? a.id < b.id : a[field] < b[field];
    if (before === descending) return false;
  }
  return true;
}

/**
 * Walks `sort` with pages of LIBRARY_WALK_PAGE following the Link headers until `rows` books
 * were seen, checking the order across pages; returns { path (the next page's, with
 * limit=LIBRARY_PAGE), pages, ms }.
 */
async function walk(port, token, order, rows) {
  const t0 = performance.now();
  let path = `/books?${new URLSearchParams({ limit: String(Math.min(LIBRARY_WALK_PAGE, rows)), sort: order.sort })}`;
  let seen = 0;
  let pages = 0;
  let last;
  while (seen < rows) {
    const response = await request(port, 'GET', path, { token });
    const books = response.json?.data;
    if (response.status !== 200 || !Array.isArray(books) || books.length === 0) {
      throw new Error(`walking sort=${order.sort}: ${path} answered ${response.status} after ${seen} books: ${response.text.slice(0, 200)}`);
    }
    if (!inOrder(last ? [last, ...books] : books, order)) throw new Error(`walking sort=${order.sort}: page ${pages + 1} is out of order`);
    seen += books.length;
    pages += 1;
    last = books.at(-1);
    const next = nextLink(response.headers);
    if (!next) throw new Error(`walking sort=${order.sort}: no Link header after ${seen} of the ${rows} books walked to`);
    const url = new URL(next, 'http://localhost');
    url.searchParams.set('limit', String(seen < rows ? Math.min(LIBRARY_WALK_PAGE, rows - seen) : LIBRARY_PAGE));
    path = `${url.pathname}${url.search}`;
  }
  return { path, pages, ms: performance.now() - t0 };
}

/**
 * The requests measured at `books` books: { id, name, path or paths, check } each, `check`
 * being what its answer must satisfy; the deep pages' cursors walked to first (their walks
 * returned as `walks`). `queries` with their expected match counts at this size.
 */
export async function libraryRequests(port, token, books, queries, expected) {
  const deepRows = Math.floor(books * LIBRARY_DEEP_SHARE);
  const requests = SORTS.map((order) => ({
    id: `page-${order.field}`,
    name: `page of ${LIBRARY_PAGE}, sort=${order.sort}`,
    path: pagePath(order.sort === 'id' ? {} : { sort: order.sort }),
    check: { order, count: LIBRARY_PAGE, total: books },
  }));
  requests.push({
    id: 'search',
    name: `page of ${LIBRARY_PAGE}, q=<title word> <surname> (${queries.length} searches in turn)`,
    paths: queries.map((q) => pagePath({ q })),
    check: { totals: expected },
  });
  const walks = {};
  for (const order of SORTS) {
    const found = await walk(port, token, order, deepRows);
    walks[order.sort] = { rows: deepRows, pages: found.pages, ms: found.ms };
    requests.push({
      id: `deep-${order.field}`,
      name: `deep page of ${LIBRARY_PAGE}, sort=${order.sort}, after ${Math.round(LIBRARY_DEEP_SHARE * 100)} % of the books`,
      path: found.path,
      first: `page-${order.field}`,
      check: { order, count: Math.min(LIBRARY_PAGE, books - deepRows) },
    });
  }
  return { requests, walks };
}

/** Checks one answer of each path of a request; returns what was wrong (empty when all is well). */
export async function checkRequest(port, token, { path, paths, check }) {
  const problems = [];
  for (const [i, each] of (paths ?? [path]).entries()) {
    const response = await request(port, 'GET', each, { token });
    const books = response.json?.data;
    if (response.status !== 200 || !Array.isArray(books)) {
      problems.push(`${each} answered ${response.status}: ${response.text.slice(0, 200)}`);
      continue;
    }
    const wanted = check.count ?? Math.min(LIBRARY_PAGE, check.totals[i]);
    if (books.length !== wanted) problems.push(`${each} gave ${books.length} books, expected ${wanted}`);
    if (check.order && !inOrder(books, check.order)) problems.push(`${each} is out of order`);
    const total = check.totals?.[i] ?? check.total;
    const counted = response.headers['x-total-count'];
    if (total !== undefined && counted !== undefined && Number(counted) !== total) {
      problems.push(`${each}: X-Total-Count ${counted}, expected ${total}`);
    }
  }
  return problems;
}
