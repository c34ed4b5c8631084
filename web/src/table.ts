// The list of books: every book fetched at once (GET /books), then sorted, filtered and shown a
// page at a time in the table, all in the page. What the book forms add, save or delete is put in
// here (keep, forget) without fetching the list again.
import { asBook } from './api.js';
import { compareBooks, searchText, type Book, type Column } from './books.js';
import { elements as ui } from './elements.js';
import { describe, messageOf } from './messages.js';
import { authorized } from './sign-in.js';

/** Rows shown at once: a 10,000-book collection is shown a page at a time, never all at once. */
const PAGE_SIZE = 50;

export type RowAction = 'edit' | 'delete';

const books = new Map<string, Book>();
/** Every book in the current sort order; the filter narrows it without sorting again. */
let sorted: Book[] = [];
let view: Book[] = [];
let sortColumn: Column = 'id';
let sortDirection: 'ascending' | 'descending' = 'ascending';
let page = 0;
/** A book to mark in the table (just added or saved). */
let marked: string | undefined;
/** Counts the list requests: only the answer to the latest one is shown. */
let listRequest = 0;
/**
 * What this page changed (the book, or null once deleted) since the latest list request was
 * sent. That list may have been read before the change, so it is applied again on top of it.
 */
const changedSinceList = new Map<string, Book | null>();
let rowAction: (action: RowAction, book: Book, button: HTMLButtonElement) => void = () => undefined;

/** What a row's Edit or Delete button does (the book forms). */
export function onRowAction(action: typeof rowAction): void {
  rowAction = action;
}

export async function loadBooks(): Promise<void> {
  const request = ++listRequest;
  changedSinceList.clear();
  ui.listError.textContent = '';
  ui.listStatus.textContent = 'Loading the collection…';
  try {
    const answer = await authorized<unknown[]>('GET', '/books');
    if (!answer || request !== listRequest) return;
    if (answer.status !== 200 || !Array.isArray(answer.data)) {
      ui.listStatus.textContent = '';
      ui.listError.textContent = describe(answer, 'The collection could not be loaded');
      return;
    }
    books.clear();
    for (const item of answer.data) {
      const book = asBook(item);
      if (book) books.set(book.id, book);
    }
    for (const [id, book] of changedSinceList) {
      if (book) books.set(id, book);
      else books.delete(id);
    }
    sortAll();
    render();
  } catch (error) {
    ui.listStatus.textContent = '';
    ui.listError.textContent = messageOf(error);
  }
}

/** Signed out: no book is kept, and a list still on its way is not shown. */
export function clearBooks(): void {
  books.clear();
  listRequest++;
  sorted = [];
  ui.body.replaceChildren();
}

/** Shows `book` as this page last saw it from the service (added or saved). */
export function keep(book: Book): void {
  books.set(book.id, book);
  changedSinceList.set(book.id, book);
}

export function forget(id: string): void {
  books.delete(id);
  changedSinceList.set(id, null);
  sorted = sorted.filter((book) => book.id !== id);
  render();
}

/** `book` as just read from the service: the table shows it if it showed other values. */
export function showCurrent(book: Book): void {
  const shown = books.get(book.id);
  if (shown && shown.title === book.title && shown.author === book.author && shown.year === book.year) return;
  keep(book);
  sortAll();
  render();
}

/** A book just added (kept): sorted in, and revealed. */
export function showAdded(id: string): void {
  sortAll();
  reveal(id);
}

/** A book just saved (kept): sorted in again and marked, on the page shown. */
export function showSaved(id: string): void {
  sortAll();
  marked = id;
  render();
}

/** Shows the page of the view that holds `id`, and marks its row. */
function reveal(id: string): void {
  marked = id;
  const index = view.findIndex((book) => book.id === id);
  if (index >= 0) page = Math.floor(index / PAGE_SIZE);
  render();
}

/** Puts `text` before the list's status line (role=status), so it is read out. */
export function announce(text: string): void {
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

function sortAll(): void {
  sorted = [...books.values()].sort(compareBooks(sortColumn, sortDirection));
}

const searchTexts = new WeakMap<Book, string>();
function haystack(book: Book): string {
  let text = searchTexts.get(book);
  if (text === undefined) {
    text = searchText(book);
    searchTexts.set(book, text);
  }
  return text;
}

function render(): void {
  const query = ui.filter.value.trim().toLocaleLowerCase();
  view = query === '' ? sorted : sorted.filter((book) => haystack(book).includes(query));
  const pages = Math.max(1, Math.ceil(view.length / PAGE_SIZE));
  page = Math.min(Math.max(0, page), pages - 1);
  const start = page * PAGE_SIZE;
  const shown = view.slice(start, start + PAGE_SIZE);

  for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
    if (header.dataset.column === sortColumn) header.setAttribute('aria-sort', sortDirection);
    else header.removeAttribute('aria-sort');
  }
  ui.body.replaceChildren(...shown.map(row));

  const total = books.size;
  const none = view.length === 0;
  ui.tableWrap.hidden = none;
  ui.empty.hidden = !none;
  if (total === 0) ui.empty.textContent = 'The collection is empty. Add the first book with the form above.';
  else if (none) ui.empty.textContent = `No book matches “${ui.filter.value.trim()}”.`;
  ui.listStatus.textContent = none
    ? ''
    : `Showing ${count(start + 1)}–${count(start + shown.length)} of ${count(view.length)} ${view.length === 1 ? 'book' : 'books'}` +
      (query === '' ? '' : ` matching “${ui.filter.value.trim()}” (${count(total)} in all)`) +
      `, sorted by ${sortColumn} ${sortDirection}.`;

  ui.pager.hidden = pages <= 1;
  ui.position.textContent = `Page ${count(page + 1)} of ${count(pages)}`;
  ui.previous.disabled = page === 0;
  ui.next.disabled = page >= pages - 1;
}

const numberFormat = new Intl.NumberFormat('en');
function count(value: number): string {
  return numberFormat.format(value);
}

/** Each cell's column name, shown before its value where the rows are cards (narrow screens, app.css). */
const CELL_LABELS = ['Id', 'Title', 'Author', 'Year'];

function row(book: Book): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.setAttribute('role', 'row');
  tr.dataset.id = book.id;
  if (book.id === marked) tr.className = 'changed';
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

ui.body.addEventListener('click', (event) => {
  const button = (event.target as Element).closest<HTMLButtonElement>('button[data-action]');
  const book = button?.dataset.id === undefined ? undefined : books.get(button.dataset.id);
  if (!button || !book) return;
  rowAction(button.dataset.action === 'edit' ? 'edit' : 'delete', book, button);
});

ui.filter.addEventListener('input', () => {
  page = 0;
  render();
});

for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
  header.querySelector('button')?.addEventListener('click', () => {
    const column = header.dataset.column as Column;
    sortDirection = column === sortColumn && sortDirection === 'ascending' ? 'descending' : 'ascending';
    sortColumn = column;
    page = 0;
    sortAll();
    render();
  });
}

ui.previous.addEventListener('click', () => turnPage(-1));
ui.next.addEventListener('click', () => turnPage(1));
function turnPage(step: number): void {
  page += step;
  render();
  // Stay on the pressed button unless it just became disabled.
  const pressed = step < 0 ? ui.previous : ui.next;
  if (pressed.disabled) (step < 0 ? ui.next : ui.previous).focus();
}
