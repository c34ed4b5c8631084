// The web page (README "Web page"): sign in, then browse, filter, sort, add, edit and delete
// books through the service's own JSON API. Plain DOM: every text from the store is set with
// textContent, never parsed as HTML (the page's policy forbids it anyway: Trusted Types).
import { NetworkError, asBook, call, type Answer } from './api.js';
import {
  FIELDS,
  changedFields,
  compareBooks,
  readFields,
  searchText,
  type Book,
  type Column,
  type Field,
  type FieldErrors,
  type FormValues,
} from './books.js';
import { restoreSession, saveSession, sessionFor, type Session } from './session.js';

/** Rows shown at once: a 10,000-book collection is shown a page at a time, never all at once. */
const PAGE_SIZE = 50;

const NOTE_EXPIRED = 'Your session has ended: a sign-in lasts 15 minutes. Sign in again to carry on; what you typed is kept.';
const NOTE_REFUSED = 'The service no longer accepts your session. Sign in again to carry on; what you typed is kept.';
const NOTE_SIGNED_OUT = 'You have signed out.';

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`#${id} is missing from the page`);
  return element as T;
}

const ui = {
  signOut: byId<HTMLButtonElement>('sign-out'),
  signIn: byId<HTMLElement>('sign-in'),
  signInHeading: byId<HTMLElement>('sign-in-heading'),
  sessionNote: byId<HTMLElement>('session-note'),
  signInForm: byId<HTMLFormElement>('sign-in-form'),
  username: byId<HTMLInputElement>('username'),
  password: byId<HTMLInputElement>('password'),
  signInError: byId<HTMLElement>('sign-in-error'),
  collection: byId<HTMLElement>('collection'),
  addForm: byId<HTMLFormElement>('add-form'),
  addError: byId<HTMLElement>('add-error'),
  booksHeading: byId<HTMLElement>('books-heading'),
  filter: byId<HTMLInputElement>('filter'),
  listStatus: byId<HTMLElement>('list-status'),
  listError: byId<HTMLElement>('list-error'),
  tableWrap: byId<HTMLElement>('table-wrap'),
  table: byId<HTMLTableElement>('books-table'),
  body: byId<HTMLTableSectionElement>('books-body'),
  empty: byId<HTMLElement>('empty'),
  pager: byId<HTMLElement>('pager'),
  previous: byId<HTMLButtonElement>('previous-page'),
  next: byId<HTMLButtonElement>('next-page'),
  position: byId<HTMLElement>('page-position'),
  editDialog: byId<HTMLDialogElement>('edit-dialog'),
  editHeading: byId<HTMLElement>('edit-heading'),
  editForm: byId<HTMLFormElement>('edit-form'),
  editError: byId<HTMLElement>('edit-error'),
  editCancel: byId<HTMLButtonElement>('edit-cancel'),
  deleteDialog: byId<HTMLDialogElement>('delete-dialog'),
  deleteText: byId<HTMLElement>('delete-text'),
  deleteError: byId<HTMLElement>('delete-error'),
  deleteConfirm: byId<HTMLButtonElement>('delete-confirm'),
  deleteCancel: byId<HTMLButtonElement>('delete-cancel'),
};

const state = {
  session: undefined as Session | undefined,
  expiryTimer: undefined as number | undefined,
  books: new Map<string, Book>(),
  /** Every book in the current sort order; the filter narrows it without sorting again. */
  sorted: [] as Book[],
  view: [] as Book[],
  sortColumn: 'id' as Column,
  sortDirection: 'ascending' as 'ascending' | 'descending',
  page: 0,
  /** The book the edit dialog was opened for, as it was then: the fields a save compares with. */
  editing: undefined as Book | undefined,
  deleting: undefined as Book | undefined,
  /** The dialog that was open when the session ended, opened again after the next sign-in. */
  resume: undefined as 'edit' | 'delete' | undefined,
  /** The button that opened a dialog, focused again when it closes. */
  opener: undefined as HTMLElement | undefined,
  /** A book to mark in the table (just added or saved). */
  marked: undefined as string | undefined,
  /** Where the focus was when the session ended: it goes back there after sign-in. */
  returnFocus: undefined as HTMLElement | undefined,
  /** Counts the list requests: only the answer to the latest one is shown. */
  listRequest: 0,
  /**
   * What this page changed (the book, or null once deleted) since the latest list request was
   * sent. That list may have been read before the change, so it is applied again on top of it.
   */
  changedSinceList: new Map<string, Book | null>(),
};

const searchTexts = new WeakMap<Book, string>();
function haystack(book: Book): string {
  let text = searchTexts.get(book);
  if (text === undefined) {
    text = searchText(book);
    searchTexts.set(book, text);
  }
  return text;
}

// ---------------------------------------------------------------------------------------
// Session
// ---------------------------------------------------------------------------------------

function startSession(session: Session): void {
  state.session = session;
  saveSession(session);
  window.clearTimeout(state.expiryTimer);
  state.expiryTimer = window.setTimeout(() => endSession(NOTE_EXPIRED), Math.max(0, session.expiresAt - Date.now()));
  ui.signIn.hidden = true;
  ui.sessionNote.textContent = '';
  ui.signInError.textContent = '';
  ui.password.value = '';
  ui.collection.hidden = false;
  ui.signOut.hidden = false;
  void loadBooks().then(() => {
    const resume = state.resume;
    state.resume = undefined;
    if (resume === 'edit' && state.editing) openDialog(ui.editDialog, firstInvalidOr(ui.editForm));
    else if (resume === 'delete' && state.deleting) openDialog(ui.deleteDialog, ui.deleteCancel);
    else if (resume === undefined) {
      const back = state.returnFocus;
      (back && back.isConnected && ui.collection.contains(back) ? back : ui.booksHeading).focus();
    }
    state.returnFocus = undefined;
  });
}

/** Back to the sign-in form. The forms keep what was typed in them; an open dialog opens again after sign-in. */
function endSession(note: string): void {
  window.clearTimeout(state.expiryTimer);
  if (document.activeElement instanceof HTMLElement && ui.collection.contains(document.activeElement)) state.returnFocus = document.activeElement;
  state.session = undefined;
  saveSession(undefined);
  if (ui.editDialog.open) {
    state.resume = 'edit';
    ui.editDialog.close();
  } else if (ui.deleteDialog.open) {
    state.resume = 'delete';
    ui.deleteDialog.close();
  }
  showSignIn(note);
}

function showSignIn(note: string): void {
  ui.collection.hidden = true;
  ui.signOut.hidden = true;
  ui.signIn.hidden = false;
  ui.sessionNote.textContent = note;
  ui.signInError.textContent = '';
  (ui.username.value === '' ? ui.username : ui.password).focus();
}

/**
 * A call with the token. Undefined when the session is over: it had expired, or the service
 * answered 401; either way the sign-in form is back and the caller's form is left as it is.
 */
async function authorized<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<Answer<T> | undefined> {
  const session = state.session;
  if (!session || session.expiresAt <= Date.now()) {
    endSession(NOTE_EXPIRED);
    return undefined;
  }
  const answer = await call<T>(method, path, { token: session.token, body });
  if (answer.status === 401) {
    if (state.session === session) endSession(NOTE_REFUSED);
    return undefined;
  }
  return answer;
}

ui.signInForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void signIn();
});

async function signIn(): Promise<void> {
  const username = ui.username.value;
  const password = ui.password.value;
  if (username === '' || password === '') {
    ui.signInError.textContent = 'Enter both the username and the password.';
    (username === '' ? ui.username : ui.password).focus();
    return;
  }
  const button = ui.signInForm.querySelector('button');
  if (button) button.disabled = true;
  ui.signInError.textContent = '';
  try {
    const answer = await call<{ token?: unknown }>('POST', '/token', { body: { username, password } });
    const token = answer.data?.token;
    if (answer.status === 200 && typeof token === 'string') {
      startSession(sessionFor(token, answer.date));
      return;
    }
    if (answer.status === 401) ui.signInError.textContent = `Wrong username or password (the service answered “${answer.message}”).`;
    else if (answer.status === 429) {
      const wait = answer.retryAfter === undefined ? 'a minute' : `${answer.retryAfter} second${answer.retryAfter === 1 ? '' : 's'}`;
      ui.signInError.textContent = `Too many failed sign-ins from this address. Wait ${wait}, then try again.`;
    } else ui.signInError.textContent = describe(answer, 'Signing in failed');
    ui.password.select();
    ui.password.focus();
  } catch (error) {
    ui.signInError.textContent = messageOf(error);
  } finally {
    if (button) button.disabled = false;
  }
}

ui.signOut.addEventListener('click', () => {
  state.resume = undefined;
  ui.addForm.reset();
  clearErrors(ui.addForm, ui.addError);
  state.books.clear();
  state.listRequest++;
  state.sorted = [];
  ui.body.replaceChildren();
  endSession(NOTE_SIGNED_OUT);
});

document.addEventListener('visibilitychange', () => {
  // A sleeping laptop delays timers: check the expiry when the tab is seen again.
  if (document.visibilityState === 'visible' && state.session && state.session.expiresAt <= Date.now()) endSession(NOTE_EXPIRED);
});

// ---------------------------------------------------------------------------------------
// The list
// ---------------------------------------------------------------------------------------

async function loadBooks(): Promise<void> {
  const request = ++state.listRequest;
  state.changedSinceList.clear();
  ui.listError.textContent = '';
  ui.listStatus.textContent = 'Loading the collection…';
  try {
    const answer = await authorized<unknown[]>('GET', '/books');
    if (!answer || request !== state.listRequest) return;
    if (answer.status !== 200 || !Array.isArray(answer.data)) {
      ui.listStatus.textContent = '';
      ui.listError.textContent = describe(answer, 'The collection could not be loaded');
      return;
    }
    state.books.clear();
    for (const item of answer.data) {
      const book = asBook(item);
      if (book) state.books.set(book.id, book);
    }
    for (const [id, book] of state.changedSinceList) {
      if (book) state.books.set(id, book);
      else state.books.delete(id);
    }
    sortBooks();
  } catch (error) {
    ui.listStatus.textContent = '';
    ui.listError.textContent = messageOf(error);
  }
}

function sortBooks(): void {
  state.sorted = [...state.books.values()].sort(compareBooks(state.sortColumn, state.sortDirection));
  render();
}

function render(): void {
  const query = ui.filter.value.trim().toLocaleLowerCase();
  state.view = query === '' ? state.sorted : state.sorted.filter((book) => haystack(book).includes(query));
  const pages = Math.max(1, Math.ceil(state.view.length / PAGE_SIZE));
  state.page = Math.min(Math.max(0, state.page), pages - 1);
  const start = state.page * PAGE_SIZE;
  const shown = state.view.slice(start, start + PAGE_SIZE);

  for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
    if (header.dataset.column === state.sortColumn) header.setAttribute('aria-sort', state.sortDirection);
    else header.removeAttribute('aria-sort');
  }
  ui.body.replaceChildren(...shown.map(row));

  const total = state.books.size;
  const none = state.view.length === 0;
  ui.tableWrap.hidden = none;
  ui.empty.hidden = !none;
  if (total === 0) ui.empty.textContent = 'The collection is empty. Add the first book with the form above.';
  else if (none) ui.empty.textContent = `No book matches “${ui.filter.value.trim()}”.`;
  ui.listStatus.textContent = none
    ? ''
    : `Showing ${count(start + 1)}–${count(start + shown.length)} of ${count(state.view.length)} ${state.view.length === 1 ? 'book' : 'books'}` +
      (query === '' ? '' : ` matching “${ui.filter.value.trim()}” (${count(total)} in all)`) +
      `, sorted by ${state.sortColumn} ${state.sortDirection}.`;

  ui.pager.hidden = pages <= 1;
  ui.position.textContent = `Page ${count(state.page + 1)} of ${count(pages)}`;
  ui.previous.disabled = state.page === 0;
  ui.next.disabled = state.page >= pages - 1;
}

const numberFormat = new Intl.NumberFormat('en');
function count(value: number): string {
  return numberFormat.format(value);
}

function row(book: Book): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.id = book.id;
  if (book.id === state.marked) tr.className = 'changed';
  for (const value of [book.id, book.title, book.author, String(book.year)]) {
    const cell = document.createElement('td');
    cell.textContent = value;
    tr.append(cell);
  }
  const cell = document.createElement('td');
  const actions = document.createElement('div');
  actions.className = 'row-actions';
  actions.append(actionButton('Edit', book, 'quiet'), actionButton('Delete', book, 'quiet'));
  cell.append(actions);
  tr.append(cell);
  return tr;
}

/** "Edit" or "Delete", named for the book it acts on ("Edit Dune") for screen readers. */
function actionButton(action: 'Edit' | 'Delete', book: Book, className: string): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = className;
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
  const book = button?.dataset.id === undefined ? undefined : state.books.get(button.dataset.id);
  if (!button || !book) return;
  state.opener = button;
  if (button.dataset.action === 'edit') openEdit(book);
  else openDelete(book);
});

ui.filter.addEventListener('input', () => {
  state.page = 0;
  render();
});

for (const header of ui.table.querySelectorAll<HTMLTableCellElement>('th[data-column]')) {
  header.querySelector('button')?.addEventListener('click', () => {
    const column = header.dataset.column as Column;
    state.sortDirection = column === state.sortColumn && state.sortDirection === 'ascending' ? 'descending' : 'ascending';
    state.sortColumn = column;
    state.page = 0;
    sortBooks();
  });
}

ui.previous.addEventListener('click', () => turnPage(-1));
ui.next.addEventListener('click', () => turnPage(1));
function turnPage(step: number): void {
  state.page += step;
  render();
  // Stay on the pressed button unless it just became disabled.
  const pressed = step < 0 ? ui.previous : ui.next;
  if (pressed.disabled) (step < 0 ? ui.next : ui.previous).focus();
}

/** Shows the page of the view that holds `id`, and marks its row. */
function reveal(id: string): void {
  state.marked = id;
  const index = state.view.findIndex((book) => book.id === id);
  if (index >= 0) state.page = Math.floor(index / PAGE_SIZE);
  render();
}

// ---------------------------------------------------------------------------------------
// Forms
// ---------------------------------------------------------------------------------------

function valuesOf(form: HTMLFormElement): FormValues {
  const input = (field: Field) => form.elements.namedItem(field) as HTMLInputElement;
  return { title: input('title').value, author: input('author').value, year: input('year').value };
}

function setValues(form: HTMLFormElement, book: Book): void {
  for (const field of FIELDS) (form.elements.namedItem(field) as HTMLInputElement).value = String(book[field]);
}

/** Marks each field of `errors` (aria-invalid and its message), clears the others; true if any. */
function showFieldErrors(form: HTMLFormElement, errors: FieldErrors): boolean {
  for (const field of FIELDS) {
    const input = form.elements.namedItem(field) as HTMLInputElement;
    const message = document.getElementById(`${input.id}-error`);
    const error = errors[field];
    if (error) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
    if (message) message.textContent = error ?? '';
  }
  return Object.keys(errors).length > 0;
}

function clearErrors(form: HTMLFormElement, formError: HTMLElement): void {
  showFieldErrors(form, {});
  formError.textContent = '';
}

function firstInvalidOr(form: HTMLFormElement): HTMLElement {
  return form.querySelector<HTMLElement>('[aria-invalid="true"]') ?? (form.elements.namedItem('title') as HTMLInputElement);
}

/** Runs `work` with the form's buttons disabled, so a double click sends once. */
async function busy(container: HTMLElement, work: () => Promise<void>): Promise<void> {
  const buttons = [...container.querySelectorAll('button')];
  for (const button of buttons) button.disabled = true;
  try {
    await work();
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

ui.addForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void busy(ui.addForm, addBook);
});

/**
 * The add form's fields typed in while a book was being sent. The next book may be typed before
 * the service answers; clearing the form after the answer must not wipe it.
 */
const typedWhileAdding = new Set<string>();
ui.addForm.addEventListener('input', (event) => {
  const name = (event.target as HTMLInputElement | null)?.name;
  if (name) typedWhileAdding.add(name);
});

async function addBook(): Promise<void> {
  const { fields, errors } = readFields(valuesOf(ui.addForm));
  ui.addError.textContent = '';
  if (showFieldErrors(ui.addForm, errors)) {
    ui.addError.textContent = 'The book was not added: check the fields marked above.';
    firstInvalidOr(ui.addForm).focus();
    return;
  }
  typedWhileAdding.clear();
  try {
    const answer = await authorized('POST', '/book', fields);
    if (!answer) return;
    const book = answer.status === 201 ? asBook(answer.data) : undefined;
    if (!book) {
      ui.addError.textContent = describe(answer, 'The book was not added');
      return;
    }
    keep(book);
    clearAddedFields();
    state.sorted = [...state.books.values()].sort(compareBooks(state.sortColumn, state.sortDirection));
    reveal(book.id);
    ui.listStatus.textContent = `Added “${book.title}” by ${book.author} (${book.year}) as book ${book.id}. ${ui.listStatus.textContent}`;
  } catch (error) {
    ui.addError.textContent = messageOf(error);
  }
}

/** Empties the fields that still hold the added book, and starts the next one at the title unless one is being typed. */
function clearAddedFields(): void {
  for (const field of FIELDS) {
    if (!typedWhileAdding.has(field)) (ui.addForm.elements.namedItem(field) as HTMLInputElement).value = '';
  }
  const focused = document.activeElement;
  const typing = focused instanceof HTMLInputElement && ui.addForm.contains(focused) && typedWhileAdding.has(focused.name);
  if (!typing) (ui.addForm.elements.namedItem('title') as HTMLInputElement).focus();
}

function openDialog(dialog: HTMLDialogElement, focus: HTMLElement): void {
  if (!dialog.open) dialog.showModal();
  focus.focus();
}

function closeDialog(dialog: HTMLDialogElement): void {
  if (dialog.open) dialog.close();
}

for (const dialog of [ui.editDialog, ui.deleteDialog]) {
  dialog.addEventListener('close', () => {
    // Closed by the person (Escape, Cancel, done), not by the end of the session.
    if (state.session === undefined) return;
    if (dialog === ui.editDialog) state.editing = undefined;
    else state.deleting = undefined;
    const opener = state.opener;
    state.opener = undefined;
    if (opener?.isConnected) opener.focus();
    else {
      const again = state.marked ? ui.body.querySelector<HTMLButtonElement>(`tr[data-id="${state.marked}"] button[data-action="edit"]`) : null;
      (again ?? ui.booksHeading).focus();
    }
  });
}

function openEdit(book: Book): void {
  state.editing = book;
  ui.editHeading.textContent = `Edit book ${book.id}`;
  setValues(ui.editForm, book);
  clearErrors(ui.editForm, ui.editError);
  openDialog(ui.editDialog, ui.editForm.elements.namedItem('title') as HTMLInputElement);
}

ui.editCancel.addEventListener('click', () => closeDialog(ui.editDialog));
ui.editForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void busy(ui.editForm, saveEdit);
});

async function saveEdit(): Promise<void> {
  const book = state.editing;
  if (!book) return;
  const { fields, errors } = readFields(valuesOf(ui.editForm));
  ui.editError.textContent = '';
  if (showFieldErrors(ui.editForm, errors)) {
    ui.editError.textContent = 'Nothing was saved: check the fields marked above.';
    firstInvalidOr(ui.editForm).focus();
    return;
  }
  const changes = changedFields(book, fields);
  if (Object.keys(changes).length === 0) {
    ui.editError.textContent = 'Nothing to save: no field was changed.';
    return;
  }
  try {
    // Only the fields that changed: PUT is a partial update (docs/api.md "PUT /book/:id").
    const answer = await authorized('PUT', `/book/${book.id}`, changes);
    if (!answer) return;
    const saved = answer.status === 200 ? asBook(answer.data) : undefined;
    if (!saved) {
      if (answer.status === 404) forget(book.id);
      ui.editError.textContent =
        answer.status === 404
          ? describe(answer, 'This book is no longer in the collection (someone may have deleted it)')
          : describe(answer, 'The changes were not saved');
      return;
    }
    keep(saved);
    state.sorted = [...state.books.values()].sort(compareBooks(state.sortColumn, state.sortDirection));
    state.marked = saved.id;
    render();
    closeDialog(ui.editDialog);
    ui.listStatus.textContent = `Saved book ${saved.id}: “${saved.title}” by ${saved.author} (${saved.year}). ${ui.listStatus.textContent}`;
  } catch (error) {
    ui.editError.textContent = messageOf(error);
  }
}

function openDelete(book: Book): void {
  state.deleting = book;
  ui.deleteText.textContent = `“${book.title}” by ${book.author} (${book.year}), book ${book.id}, will be removed from the collection. This cannot be undone.`;
  ui.deleteError.textContent = '';
  // Focus starts on Cancel: the safe choice.
  openDialog(ui.deleteDialog, ui.deleteCancel);
}

ui.deleteCancel.addEventListener('click', () => closeDialog(ui.deleteDialog));
ui.deleteConfirm.addEventListener('click', () => void busy(ui.deleteDialog, deleteBook));

async function deleteBook(): Promise<void> {
  const book = state.deleting;
  if (!book) return;
  ui.deleteError.textContent = '';
  try {
    const answer = await authorized('DELETE', `/book/${book.id}`);
    if (!answer) return;
    if (answer.status !== 200 && answer.status !== 404) {
      ui.deleteError.textContent = describe(answer, 'The book was not deleted');
      return;
    }
    forget(book.id);
    if (state.opener && !state.opener.isConnected) state.opener = undefined;
    closeDialog(ui.deleteDialog);
    ui.listStatus.textContent =
      (answer.status === 200 ? `Deleted “${book.title}”.` : `“${book.title}” was already gone (${answer.status} ${answer.message}).`) +
      ` ${ui.listStatus.textContent}`;
  } catch (error) {
    ui.deleteError.textContent = messageOf(error);
  }
}

/** Shows `book` as this page last saw it from the service (added or saved). */
function keep(book: Book): void {
  state.books.set(book.id, book);
  state.changedSinceList.set(book.id, book);
}

function forget(id: string): void {
  state.books.delete(id);
  state.changedSinceList.set(id, null);
  state.sorted = state.sorted.filter((book) => book.id !== id);
  render();
}

// ---------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------

/** The service's own answer in words: `what`, then the status and the envelope's message. */
function describe(answer: Answer, what: string): string {
  const reason: Record<number, string> = {
    400: 'the service found the values invalid',
    404: 'the service has no such book',
    413: 'the request was too large',
    503: 'the service cannot reach its store; try again shortly',
  };
  const why = reason[answer.status];
  return `${what}: ${why ? `${why} ` : ''}(HTTP ${answer.status} “${answer.message}”).`;
}

function messageOf(error: unknown): string {
  return error instanceof NetworkError ? error.message : `Something went wrong in the page: ${String(error)}`;
}

// ---------------------------------------------------------------------------------------
// Start
// ---------------------------------------------------------------------------------------

const restored = restoreSession();
if (restored === undefined) showSignIn('');
else if (restored === 'expired') showSignIn(NOTE_EXPIRED);
else startSession(restored);
