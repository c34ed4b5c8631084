// The list of books: one page at a time from the service (GET /books?limit=…&sort=…&q=…&cursor=…,
// docs/api.md), so a collection of a million books costs the page no more than one of fifty.
// Sorting, the filter, the page size and the pager each ask for one page; which page is shown
// lives in the URL's fragment (list-state.ts), so a link or Back/Forward shows it again. After
// an add, an edit or a delete the same page is asked for again, so the row shows the change
// or leaves.
import { asBook } from './api.js';
import type { Book, Column } from './books.js';
import { listed, type Change } from './changes.js';
import { elements as ui } from './elements.js';
import {
  FILTER_MAX_LENGTH,
  FIRST_PAGE,
  PAGE_SIZES,
  firstPageOf,
  fromFragment,
  isListFragment,
  listPath,
  nextCursor,
  nextPage,
  pageNumber,
  previousPage,
  toFragment,
  totalFrom,
  type ListState,
  type Total,
} from './list-state.js';
import { describe, messageOf } from './messages.js';
import { authorized, signedIn } from './sign-in.js';

/** Typing pauses this long before the filter is sent: one request per word, not per key. */
const FILTER_DELAY_MS = 150;

export type RowAction = 'edit' | 'delete';

/** The page asked for last: shown once its answer arrives. */
let state: ListState = FIRST_PAGE;
/** The page on screen: its state, its books, and the cursor of the page after it (none on the last). */
let shown: { state: ListState; books: Book[]; next: string | undefined } | undefined;
/** The books on screen, by id: what a row's buttons act on. */
const books = new Map<string, Book>();
/** How many books match the filter `q`: only a first page says, so it is kept for the pages after it. */
let total: { q: string; total: Total; stale: boolean } | undefined;
/** A book to mark in the table (just added or saved). */
let marked: string | undefined;
/** Books changed elsewhere: their rows are marked until then (ms since the epoch). */
const fresh = new Map<string, number>();
const FRESH_MS = 5000;
/** Said before the status line at the next answer (what a write did). */
let pending = '';
/** Counts the list requests: only the answer to the latest one is shown, whatever order they arrive in. */
let listRequest = 0;
/** Calls off the request a newer one replaces (the service stops working on it). */
let inFlight: AbortController | undefined;
let filterTimer: number | undefined;
let rowAction: (action: RowAction, book: Book, button: HTMLButtonElement) => void = () => undefined;

/** What a row's Edit or Delete button does (the book forms). */
export function onRowAction(action: typeof rowAction): void {
  rowAction = action;
}

/** Signed in: the page the URL names (a link, a reload), or the first. */
export async function loadBooks(): Promise<void> {
  state = isListFragment(location.hash) ? fromFragment(location.hash) : FIRST_PAGE;
  showControls();
  ui.listError.textContent = '';
  if (!shown) ui.listStatus.textContent = 'Loading the collection…';
  await fetchPage();
}

/** Signed out: no book is kept, and a list still on its way is not shown. */
export function clearBooks(): void {
  cancel();
  window.clearTimeout(filterTimer);
  filterTimer = undefined;
  books.clear();
  shown = undefined;
  total = undefined;
  ui.body.replaceChildren();
}

/** Asks for the page shown again (after a write): the count too, since it may have changed. */
export function refresh(): void {
  if (total) total.stale = true;
  void fetchPage();
}

/** `book` as the service just answered it (added or saved): shown at once if its row is on screen. */
export function keep(book: Book): void {
  if (!books.has(book.id) || !shown) return;
  books.set(book.id, book);
  shown.books = shown.books.map((listed) => (listed.id === book.id ? book : listed));
}

/** The book is gone: its row leaves at once, then the page is asked for again. */
export function forget(id: string): void {
  if (shown) shown.books = shown.books.filter((book) => book.id !== id);
  render();
  refresh();
}

/** `book` as just read from the service: the table shows it if it showed other values. */
export function showCurrent(book: Book): void {
  const listed = books.get(book.id);
  if (!listed || (listed.title === book.title && listed.author === book.author && listed.year === book.year)) return;
  keep(book);
  render();
}

/** Changes made elsewhere (changes.ts): said, the page read again, their rows marked (app.css fades it). */
export function showChanges(changes: Change[]): void {
  for (const [id, until] of fresh) if (until < Date.now()) fresh.delete(id);
  for (const { id, book } of changes) if (book) fresh.set(id, Date.now() + FRESH_MS);
  const [change] = changes;
  const title = change?.book?.title ?? books.get(change?.id ?? '')?.title;
  announce(changes.length === 1 && change ? `Book ${change.id}${title ? ` “${title}”` : ''} was ${change.kind} elsewhere.` : `${changes.length} changes were made elsewhere.`);
  // A filter being typed asks for its page anyway.
  if (filterTimer === undefined) refresh();
}

/** A book just added: the page is read again, with its row marked if the book is on it. */
export function showAdded(id: string): void {
  marked = id;
  refresh();
}

/** A book just saved: marked, and the page read again (it may now sort elsewhere, or no longer match the filter). */
export function showSaved(id: string): void {
  marked = id;
  render();
  refresh();
}

/** Says `text` in the list's status line (role=status), now and before the status of the next answer. */
export function announce(text: string): void {
  pending = `${text} `;
  ui.listStatus.textContent = `${text} ${ui.listStatus.textContent}`;
}

/** The row's Edit or Delete button of book `id`, if it is shown (the rows are made anew at each render). */
export function rowButton(action: RowAction, id: string): HTMLButtonElement | null {
  return ui.body.querySelector<HTMLButtonElement>(`button[data-action="${action}"][data-id="${id}"]`);
}

/** The Edit button of the marked book's row, if it is shown: the focus goes there after a dialog. */
export function markedEditButton(): HTMLButtonElement | null {
  return marked ? ui.body.querySelector<HTMLButtonElement>(`tr[data-id="${marked}"] button[data-action="edit"]`) : null;
}

// ---------------------------------------------------------------------------------------
// Asking for a page
// ---------------------------------------------------------------------------------------

/**
 * Shows `next`: the URL names it (a new history entry with `push`, so Back returns; `replace`
 * while typing a filter), the controls show it at once, and its page is asked for.
 */
function go(next: ListState, history: 'push' | 'replace', note = ''): void {
  state = next;
  const fragment = toFragment(next);
  if (fragment !== (location.hash === '#' ? '' : location.hash)) {
    const url = fragment === '' ? location.pathname + location.search : fragment;
    if (history === 'push') window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
  }
  showControls();
  ui.listError.textContent = note;
  void fetchPage();
}

/** Drops the request on its way, if any: its answer will not be shown. */
function cancel(): void {
  listRequest++;
  inFlight?.abort();
  inFlight = undefined;
}

async function fetchPage(): Promise<void> {
  cancel();
  const request = listRequest;
  const controller = new AbortController();
  inFlight = controller;
  const asked = state;
  ui.table.setAttribute('aria-busy', 'true');
  try {
    const answer = await authorized<unknown[]>('GET', listPath(asked), undefined, undefined, controller.signal);
    if (!answer || request !== listRequest) return;
    if (answer.status === 400 && asked.cursors.length > 0 && answer.message.startsWith('Invalid cursor')) {
      // A link from before the service's secret changed, or edited: its first page instead.
      go(firstPageOf(asked), 'replace', `That page could not be opened (HTTP 400 “${answer.message}”); here is the first page instead.`);
      return;
    }
    if (answer.status !== 200 || !Array.isArray(answer.data)) {
      ui.listStatus.textContent = '';
      ui.listError.textContent = describe(answer, 'The books could not be listed');
      ui.table.removeAttribute('aria-busy');
      return;
    }
    listed(answer.headers.get('changes-cursor'));
    const q = asked.q.trim();
    if (asked.cursors.length === 0) {
      const counted = totalFrom(answer.headers.get('x-total-count'), answer.headers.get('x-total-count-estimate'));
      total = counted ? { q, total: counted, stale: false } : undefined;
    }
    shown = {
      state: asked,
      books: answer.data.map(asBook).filter((book) => book !== undefined),
      next: nextCursor(answer.headers.get('link')),
    };
    render();
    // A later page carries no count: the first page of the same filter says it (one book long).
    // The page is shown already; without the count it only lacks "of N books".
    if (asked.cursors.length > 0 && (total?.q !== q || total.stale)) await fetchTotal(asked, request, controller.signal).catch(() => undefined);
  } catch (error) {
    if (controller.signal.aborted || request !== listRequest) return;
    ui.listStatus.textContent = '';
    ui.listError.textContent = messageOf(error);
    ui.table.removeAttribute('aria-busy');
  }
}

async function fetchTotal(asked: ListState, request: number, signal: AbortSignal): Promise<void> {
  const answer = await authorized('GET', listPath(firstPageOf(asked), 1), undefined, undefined, signal);
  if (!answer || request !== listRequest || answer.status !== 200) return;
  const counted = totalFrom(answer.headers.get('x-total-count'), answer.headers.get('x-total-count-estimate'));
  total = counted ? { q: asked.q.trim(), total: counted, stale: false } : undefined;
  render();
}

// ---------------------------------------------------------------------------------------
// Showing it
// ---------------------------------------------------------------------------------------

/** The controls as `state` has them, before its answer arrives: the sort arrows, the filter text, the page size. */
function showControls(): void {
  for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
    if (header.dataset.column === state.column) header.setAttribute('aria-sort', state.descending ? 'descending' : 'ascending');
    else header.removeAttribute('aria-sort');
  }
  if (ui.filter.value !== state.q) ui.filter.value = state.q;
  ui.pageSize.value = String(state.size);
}

const numberFormat = new Intl.NumberFormat('en');
function count(value: number): string {
  return numberFormat.format(value);
}

function render(): void {
  if (!shown) return;
  const { state: page, books: list, next } = shown;
  ui.table.removeAttribute('aria-busy');
  books.clear();
  for (const book of list) books.set(book.id, book);

  // A row's button that had the focus is made anew: the focus moves to its new self.
  const focused = document.activeElement instanceof HTMLButtonElement && ui.body.contains(document.activeElement) ? document.activeElement.dataset : undefined;
  ui.body.replaceChildren(...list.map(row));
  if (focused?.action && focused.id) (rowButton(focused.action as RowAction, focused.id) ?? ui.booksHeading).focus();

  const number = pageNumber(page);
  const q = page.q.trim();
  const counted = total?.q === q ? total.total : undefined;
  const none = list.length === 0;
  ui.tableWrap.hidden = none;
  ui.empty.hidden = !none;
  if (number > 1) ui.empty.textContent = 'No more books: this page is past the last one.';
  else if (q === '') ui.empty.textContent = 'The collection is empty. Add the first book with the form above.';
  else ui.empty.textContent = `No book matches “${q}”.`;

  const first = (number - 1) * page.size + 1;
  const about = counted?.estimate ? 'about ' : '';
  const of = counted ? ` of ${about}${count(counted.count)} ${counted.count === 1 && !counted.estimate ? 'book' : 'books'}` : '';
  const direction = page.descending ? 'descending' : 'ascending';
  ui.listStatus.textContent =
    pending +
    (none ? '' : `Showing ${count(first)}–${count(first + list.length - 1)}${of}${q === '' ? '' : ` matching “${q}”`}, sorted by ${page.column} ${direction}.`);
  pending = '';

  const pages = counted ? Math.max(1, Math.ceil(counted.count / page.size)) : undefined;
  ui.pager.hidden = number === 1 && next === undefined;
  ui.position.textContent = `Page ${count(number)}${pages === undefined ? '' : ` of ${about}${count(pages)}`}`;
  ui.previous.disabled = number === 1;
  ui.next.disabled = next === undefined;
  // Stay on the pressed pager button unless it just became disabled.
  if (document.activeElement === ui.next && ui.next.disabled && !ui.previous.disabled) ui.previous.focus();
  if (document.activeElement === ui.previous && ui.previous.disabled && !ui.next.disabled) ui.next.focus();
}

/** Each cell's column name, shown before its value where the rows are cards (narrow screens, app.css). */
const CELL_LABELS = ['Id', 'Title', 'Author', 'Year'];

function row(book: Book): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.setAttribute('role', 'row');
  tr.dataset.id = book.id;
  if (book.id === marked) tr.className = 'changed';
  if ((fresh.get(book.id) ?? 0) > Date.now()) tr.classList.add('fresh');
  [book.id, book.title, book.author, String(book.year)].forEach((value, column) => {
    const cell = document.createElement('td');
    cell.setAttribute('role', 'cell');
    cell.dataset.label = CELL_LABELS[column];
    cell.textContent = value;
    tr.append(cell);
  });
  const cell = document.createElement('td');
  cell.setAttribute('role', 'cell');
  const actions = document.createElement('div');
  actions.className = 'row-actions';
  actions.append(actionButton('Edit', book), actionButton('Delete', book));
  cell.append(actions);
  tr.append(cell);
  return tr;
}

/** "Edit" or "Delete", named for the book it acts on ("Edit Dune") for screen readers. */
function actionButton(action: 'Edit' | 'Delete', book: Book): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'quiet';
  button.dataset.action = action.toLowerCase();
  button.dataset.id = book.id;
  const hidden = document.createElement('span');
  hidden.className = 'visually-hidden';
  hidden.textContent = ` ${book.title}`;
  button.append(action, hidden);
  return button;
}

// ---------------------------------------------------------------------------------------
// The controls: each asks for one page
// ---------------------------------------------------------------------------------------

ui.body.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button[data-action]');
  const book = button?.dataset.id === undefined ? undefined : books.get(button.dataset.id);
  if (!button || !book) return;
  rowAction(button.dataset.action === 'edit' ? 'edit' : 'delete', book, button);
});

ui.filter.maxLength = FILTER_MAX_LENGTH;
ui.filter.addEventListener('input', () => {
  // The answer on its way is for older text: dropped now, so it never shows after this key.
  cancel();
  window.clearTimeout(filterTimer);
  filterTimer = window.setTimeout(() => {
    filterTimer = undefined;
    go(firstPageOf({ ...state, q: ui.filter.value }), 'replace');
  }, FILTER_DELAY_MS);
});

/**
 * The state with the filter text as typed, even if its pause has not passed yet: a sort or a
 * page size chosen right after typing applies to the new text (and does not put the old one back).
 */
function withTypedFilter(): ListState {
  if (filterTimer === undefined) return state;
  window.clearTimeout(filterTimer);
  filterTimer = undefined;
  return firstPageOf({ ...state, q: ui.filter.value });
}

for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
  header.querySelector('button')?.addEventListener('click', () => {
    const current = withTypedFilter();
    const column = header.dataset.column as Column;
    const descending = column === current.column && !current.descending;
    go(firstPageOf({ ...current, column, descending }), 'push');
  });
}

ui.pageSize.replaceChildren(...PAGE_SIZES.map((size) => new Option(String(size))));
ui.pageSize.addEventListener('change', () => {
  // Cursors do not depend on the page size, but the page numbers before this one would: start again.
  go(firstPageOf({ ...withTypedFilter(), size: Number(ui.pageSize.value) }), 'push');
});

// A page turn while a new filter text waits for its pause: that text's first page instead.
ui.previous.addEventListener('click', () => {
  const current = withTypedFilter();
  go(current === state ? previousPage(state) : current, 'push');
});
ui.next.addEventListener('click', () => {
  const current = withTypedFilter();
  if (current !== state) return go(current, 'push');
  // Only from the page on screen: a second click before its answer arrives does nothing.
  if (shown?.state !== state || shown.next === undefined) return;
  go(nextPage(state, shown.next), 'push');
});

/** Back, Forward, or a link to another page of the list typed in: show what the URL now names. */
function followLocation(): void {
  if (!signedIn() || !isListFragment(location.hash)) return;
  const named = fromFragment(location.hash);
  if (toFragment(named) === toFragment(state)) return;
  window.clearTimeout(filterTimer);
  filterTimer = undefined;
  state = named;
  showControls();
  ui.listError.textContent = '';
  void fetchPage();
}
window.addEventListener('popstate', followLocation);
window.addEventListener('hashchange', followLocation);
