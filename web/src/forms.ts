// The book forms: add (always on the page), edit and delete (dialogs opened from a row of the
// table). Each checks what was typed before sending (books.ts), sends it with the token, says in
// words what the service answered, and puts the result in the list (table.ts).
//
// Writes are safe to repeat and never undo someone else's (docs/api.md, issue 22): an add carries
// an Idempotency-Key and is retried with it, so a lost answer never makes two books; an edit or a
// delete reads the book first (GET /book/:id) and sends its ETag as If-Match, and a 412 opens the
// conflict dialog with the book as it is now.
import { NetworkError, asBook, type Answer } from './api.js';
import { BookForm } from './book-form.js';
import { FIELDS, changedFields, type Book } from './books.js';
import { ownWrite, type Change } from './changes.js';
import { elements as ui } from './elements.js';
import { describe, messageOf } from './messages.js';
import { authorized, signedIn } from './sign-in.js';
import { announce, forget, keep, markedEditButton, onRowAction, rowButton, showAdded, showCurrent, showSaved, type RowAction } from './table.js';

const addForm = new BookForm(ui.addForm, 'add');
const editForm = new BookForm(ui.editForm, 'edit');

/** A book as the service answered it just now, with its version (ETag; undefined if the service sent none). */
interface Reading {
  book: Book;
  etag: string | undefined;
}

const GONE = 'This book is no longer in the collection (someone may have deleted it)';

/** The book the edit dialog was opened for, as read then: the fields a save compares with, the version it expects. */
let editing: Reading | undefined;
let deleting: Reading | undefined;
/** The write the conflict dialog is about, and the book as it is now. */
let conflict: { action: RowAction; now: Reading } | undefined;
/** The dialog that was open when the session ended, opened again after the next sign-in. */
let suspended: 'edit' | 'delete' | undefined;
/** The button that opened a dialog, focused again when it closes. */
let opener: HTMLElement | undefined;

/** The session ended: the open dialog, if any, is closed and remembered, with what was typed in it. */
export function suspendDialog(): void {
  // The conflict is read again when the write is retried after sign-in.
  conflict = undefined;
  closeDialog(ui.conflictDialog);
  if (ui.editDialog.open) {
    suspended = 'edit';
    ui.editDialog.close();
  } else if (ui.deleteDialog.open) {
    suspended = 'delete';
    ui.deleteDialog.close();
  }
}

/** Signed in again: the dialog the session's end closed opens again. True if there was one. */
export function resumeDialog(): boolean {
  const dialog = suspended;
  suspended = undefined;
  if (dialog === 'edit' && editing) openDialog(ui.editDialog, editForm.firstInvalid());
  else if (dialog === 'delete' && deleting) openDialog(ui.deleteDialog, ui.deleteCancel);
  return dialog !== undefined;
}

/** Signed out: what was typed in the add form, and a dialog to open again, are forgotten. */
export function clearForms(): void {
  suspended = undefined;
  unsettledAdd = undefined;
  addForm.form.reset();
  addForm.clearErrors();
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

// ---------------------------------------------------------------------------------------
// Add
// ---------------------------------------------------------------------------------------

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

/** Tries of one add, and the pause before the second; each next pause is twice as long (0.3, 0.6, 1.2, 2.4 s). */
const ADD_TRIES = 5;
const FIRST_PAUSE_MS = 300;
/** Answers that wrote nothing and may go through a little later: the store is down, or the same key is still being processed. */
const RETRIED_STATUSES = new Set([409, 503]);

/**
 * The add whose outcome is not known (every try failed, or the session ended): sending the same
 * values again reuses its key, so if one of those tries did store the book the service answers it
 * again instead of storing a second.
 */
let unsettledAdd: { body: string; key: string } | undefined;

async function addBook(): Promise<void> {
  const fields = addForm.checkedFields('The book was not added: check the fields marked above.');
  if (!fields) return;
  typedWhileAdding.clear();
  const body = JSON.stringify(fields);
  if (unsettledAdd?.body !== body) unsettledAdd = { body, key: newIdempotencyKey() };
  const { key } = unsettledAdd;
  let answer: Answer | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      answer = await ownWrite(authorized('POST', '/book', fields, { 'idempotency-key': key }));
      if (!answer) return;
      if (!RETRIED_STATUSES.has(answer.status) || attempt === ADD_TRIES) break;
    } catch (error) {
      // A lost answer: the book may be stored. Only the same key may ask again.
      if (!(error instanceof NetworkError) || attempt === ADD_TRIES) {
        addForm.error.textContent = messageOf(error);
        return;
      }
    }
    await pause(FIRST_PAUSE_MS * 2 ** (attempt - 1));
    // Signed out meanwhile: the add is dropped with what was typed (clearForms).
    if (!signedIn()) return;
  }
  if (!RETRIED_STATUSES.has(answer.status)) unsettledAdd = undefined;
  const book = answer.status === 201 ? asBook(answer.data) : undefined;
  if (!book) {
    addForm.error.textContent = describe(answer, 'The book was not added');
    return;
  }
  keep(book);
  clearAddedFields();
  showAdded(book.id);
  announce(`Added “${book.title}” by ${book.author} (${book.year}) as book ${book.id}.`);
}

/** A new Idempotency-Key. crypto.randomUUID exists only in secure contexts (https, localhost); the page may be served over plain http elsewhere. */
function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

function pause(milliseconds: number): Promise<void> {
  return new Promise((resolve) => window.setTimeout(resolve, milliseconds));
}

/** Empties the fields that still hold the added book, and starts the next one at the title unless one is being typed. */
function clearAddedFields(): void {
  for (const field of FIELDS) {
    if (!typedWhileAdding.has(field)) addForm.input(field).value = '';
  }
  const focused = document.activeElement;
  const typing = focused instanceof HTMLInputElement && ui.addForm.contains(focused) && typedWhileAdding.has(focused.name);
  if (!typing) addForm.input('title').focus();
}

// ---------------------------------------------------------------------------------------
// The dialogs: edit and delete
// ---------------------------------------------------------------------------------------

onRowAction((action, book, button) => {
  opener = button;
  // The row's buttons wait for the read, so a double click opens one dialog.
  void busy(button.parentElement ?? button, () => (action === 'edit' ? openEdit(book) : openDelete(book)));
});

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
    if (!signedIn()) return;
    const action: RowAction = dialog === ui.editDialog ? 'edit' : 'delete';
    const id = (action === 'edit' ? editing : deleting)?.book.id;
    if (action === 'edit') editing = undefined;
    else deleting = undefined;
    const button = opener;
    opener = undefined;
    // The row may have been drawn again meanwhile (the book read anew): its new button then.
    const again = id === undefined ? null : rowButton(action, id);
    if (button?.isConnected) button.focus();
    else (again ?? markedEditButton() ?? ui.booksHeading).focus();
  });
}

/**
 * The book as the service holds it now, and its ETag (GET /book/:id); the table is brought up to
 * date with it. Otherwise the service's answer (404, 503…), or undefined if the session ended.
 */
async function readBook(id: string): Promise<Reading | Answer | undefined> {
  const answer = await authorized('GET', `/book/${id}`);
  if (!answer) return undefined;
  const book = answer.status === 200 ? asBook(answer.data) : undefined;
  if (!book) return answer;
  showCurrent(book);
  return { book, etag: answer.etag };
}

/** The book read for a dialog about to open; if it cannot be, says why above the table. */
async function readForDialog(id: string): Promise<Reading | undefined> {
  ui.listError.textContent = '';
  try {
    const read = await readBook(id);
    if (read === undefined || 'book' in read) return read;
    if (read.status === 404) {
      forget(id);
      ui.booksHeading.focus();
    }
    ui.listError.textContent = describe(read, read.status === 404 ? GONE : 'The book could not be read');
  } catch (error) {
    ui.listError.textContent = messageOf(error);
  }
  return undefined;
}

/** Sent as If-Match: the write is done only if the book is still the version the person saw. */
function ifMatch(etag: string | undefined): Record<string, string> | undefined {
  return etag === undefined ? undefined : { 'if-match': etag };
}

// ---------------------------------------------------------------------------------------
// Edit
// ---------------------------------------------------------------------------------------

async function openEdit(listed: Book): Promise<void> {
  const read = await readForDialog(listed.id);
  if (!read) return;
  editing = read;
  ui.editNews.hidden = true;
  ui.editHeading.textContent = `Edit book ${read.book.id}`;
  editForm.fill(read.book);
  editForm.clearErrors();
  openDialog(ui.editDialog, editForm.input('title'));
}

ui.editCancel.addEventListener('click', () => closeDialog(ui.editDialog));

/** Changes made elsewhere (changes.ts): one to the book being edited is told before a save (which 412 still guards). */
export function changedElsewhere(changes: Change[]): void {
  const open = editing;
  if (!open || !ui.editDialog.open) return;
  const held = Number(/-(\d+)"$/.exec(open.etag ?? '')?.[1] ?? -1);
  // A delete carries the version the book had.
  const change = changes.findLast(({ id, version, book }) => id === open.book.id && version + (book ? 0 : 1) > held);
  if (!change) return;
  const now = change.book;
  ui.editNewsText.textContent = now
    ? `Someone else changed this book after you opened it: it now reads “${now.title}” by ${now.author} (${now.year}). Saving your values asks first.`
    : 'Someone else deleted this book after you opened it: it can no longer be saved.';
  ui.editNewsLoad.hidden = !now;
  ui.editNews.hidden = false;
}

ui.editNewsLoad.addEventListener('click', () =>
  void busy(ui.editForm, async () => {
    const id = editing?.book.id;
    if (id === undefined) return;
    try {
      const read = await readBook(id);
      if (read === undefined) return;
      if (!('book' in read)) {
        editForm.error.textContent = describe(read, read.status === 404 ? GONE : 'The book could not be read');
        return;
      }
      editing = read;
      editForm.fill(read.book);
      editForm.clearErrors();
      ui.editNews.hidden = true;
      editForm.input('title').focus();
    } catch (error) {
      editForm.error.textContent = messageOf(error);
    }
  }),
);
ui.editForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void busy(ui.editForm, saveEdit);
});

async function saveEdit(): Promise<void> {
  const opened = editing;
  if (!opened) return;
  const { book } = opened;
  const fields = editForm.checkedFields('Nothing was saved: check the fields marked above.');
  if (!fields) return;
  const changes = changedFields(book, fields);
  if (Object.keys(changes).length === 0) {
    editForm.error.textContent = 'Nothing to save: no field was changed.';
    return;
  }
  try {
    // Only the fields that changed: PUT is a partial update (docs/api.md "PUT /book/:id").
    const answer = await ownWrite(authorized('PUT', `/book/${book.id}`, changes, ifMatch(opened.etag)));
    if (!answer) return;
    if (answer.status === 412) {
      await showConflict('edit', book);
      return;
    }
    const saved = answer.status === 200 ? asBook(answer.data) : undefined;
    if (!saved) {
      if (answer.status === 404) forget(book.id);
      editForm.error.textContent = describe(answer, answer.status === 404 ? GONE : 'The changes were not saved');
      return;
    }
    keep(saved);
    showSaved(saved.id);
    closeDialog(ui.editDialog);
    announce(`Saved book ${saved.id}: “${saved.title}” by ${saved.author} (${saved.year}).`);
  } catch (error) {
    editForm.error.textContent = messageOf(error);
  }
}

// ---------------------------------------------------------------------------------------
// Delete
// ---------------------------------------------------------------------------------------

async function openDelete(listed: Book): Promise<void> {
  const read = await readForDialog(listed.id);
  if (!read) return;
  deleting = read;
  const { book } = read;
  ui.deleteText.textContent = `“${book.title}” by ${book.author} (${book.year}), book ${book.id}, will be removed from the collection. This cannot be undone.`;
  ui.deleteError.textContent = '';
  // Focus starts on Cancel: the safe choice.
  openDialog(ui.deleteDialog, ui.deleteCancel);
}

ui.deleteCancel.addEventListener('click', () => closeDialog(ui.deleteDialog));
ui.deleteConfirm.addEventListener('click', () => void busy(ui.deleteDialog, deleteBook));

async function deleteBook(): Promise<void> {
  const opened = deleting;
  if (!opened) return;
  const { book } = opened;
  ui.deleteError.textContent = '';
  try {
    const answer = await ownWrite(authorized('DELETE', `/book/${book.id}`, undefined, ifMatch(opened.etag)), opened.etag);
    if (!answer) return;
    if (answer.status === 412) {
      await showConflict('delete', book);
      return;
    }
    if (answer.status !== 200 && answer.status !== 404) {
      ui.deleteError.textContent = describe(answer, 'The book was not deleted');
      return;
    }
    deleted(book, answer);
  } catch (error) {
    ui.deleteError.textContent = messageOf(error);
  }
}

/** The book is gone: deleted by this page (200) or by someone else before (404). */
function deleted(book: Book, answer: Answer): void {
  forget(book.id);
  if (opener && !opener.isConnected) opener = undefined;
  closeDialog(ui.deleteDialog);
  announce(answer.status === 200 ? `Deleted “${book.title}”.` : `“${book.title}” was already gone (${answer.status} ${answer.message}).`);
}

// ---------------------------------------------------------------------------------------
// The conflict: the service refused a write with 412, the book changed since it was read
// ---------------------------------------------------------------------------------------

/** Reads the book again and shows it in the conflict dialog, over the edit or delete dialog. */
async function showConflict(action: RowAction, opened: Book): Promise<void> {
  const { id } = opened;
  const now = await readBook(id);
  if (now === undefined) return;
  if (!('book' in now)) {
    if (now.status === 404 && action === 'delete') return deleted(opened, now);
    if (now.status === 404) forget(id);
    const message = describe(now, now.status === 404 ? GONE : 'The book changed since you opened it, and could not be read again');
    (action === 'edit' ? editForm.error : ui.deleteError).textContent = message;
    return;
  }
  conflict = { action, now };
  ui.conflictText.textContent =
    action === 'edit'
      ? `Someone saved book ${id} after you opened it; it now reads as below. Reload puts these values in the form (what you typed is lost); Overwrite saves your values over them.`
      : `Someone saved book ${id} after you asked to delete it; it now reads as below. Reload keeps it and closes this; Delete anyway deletes it as it is now.`;
  const values: Array<[string, string]> = [
    ['Title', now.book.title],
    ['Author', now.book.author],
    ['Year', String(now.book.year)],
  ];
  ui.conflictValues.replaceChildren(
    ...values.flatMap(([name, value]) => {
      const term = document.createElement('dt');
      term.textContent = name;
      const detail = document.createElement('dd');
      detail.textContent = value;
      return [term, detail];
    }),
  );
  ui.conflictProceed.textContent = action === 'edit' ? 'Overwrite' : 'Delete anyway';
  // Focus starts on Reload: nothing is written.
  openDialog(ui.conflictDialog, ui.conflictReload);
}

ui.conflictReload.addEventListener('click', () => {
  const open = conflict;
  conflict = undefined;
  closeDialog(ui.conflictDialog);
  if (open?.action === 'edit') {
    editing = open.now;
    ui.editNews.hidden = true;
    editForm.fill(open.now.book);
    editForm.clearErrors();
    editForm.input('title').focus();
  } else if (open) closeDialog(ui.deleteDialog);
});

ui.conflictProceed.addEventListener('click', () => {
  const open = conflict;
  conflict = undefined;
  closeDialog(ui.conflictDialog);
  if (!open) return;
  // The same write again, now expecting the version just read: it replaces what the other person saved.
  if (open.action === 'edit') {
    editing = open.now;
    void busy(ui.editForm, saveEdit);
  } else {
    deleting = open.now;
    void busy(ui.deleteDialog, deleteBook);
  }
});

ui.conflictDialog.addEventListener('close', () => {
  // Escape: back to the dialog underneath, which still expects the version it read.
  conflict = undefined;
  if (ui.editDialog.open && !ui.editDialog.contains(document.activeElement)) editForm.input('title').focus();
  else if (ui.deleteDialog.open && !ui.deleteDialog.contains(document.activeElement)) ui.deleteCancel.focus();
});
