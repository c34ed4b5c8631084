// The book forms: add (always on the page), edit and delete (dialogs opened from a row of the
// table). Each checks what was typed before sending (books.ts), sends it with the token, says in
// words what the service answered, and puts the result in the list (table.ts).
import { asBook } from './api.js';
import { BookForm } from './book-form.js';
import { FIELDS, changedFields, type Book } from './books.js';
import { elements as ui } from './elements.js';
import { describe, messageOf } from './messages.js';
import { authorized, signedIn } from './sign-in.js';
import { announce, forget, keep, markedEditButton, onRowAction, showAdded, showSaved } from './table.js';

const addForm = new BookForm(ui.addForm, 'add');
const editForm = new BookForm(ui.editForm, 'edit');

/** The book the edit dialog was opened for, as it was then: the fields a save compares with. */
let editing: Book | undefined;
let deleting: Book | undefined;
/** The dialog that was open when the session ended, opened again after the next sign-in. */
let suspended: 'edit' | 'delete' | undefined;
/** The button that opened a dialog, focused again when it closes. */
let opener: HTMLElement | undefined;

/** The session ended: the open dialog, if any, is closed and remembered, with what was typed in it. */
export function suspendDialog(): void {
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

async function addBook(): Promise<void> {
  const fields = addForm.checkedFields('The book was not added: check the fields marked above.');
  if (!fields) return;
  typedWhileAdding.clear();
  try {
    const answer = await authorized('POST', '/book', fields);
    if (!answer) return;
    const book = answer.status === 201 ? asBook(answer.data) : undefined;
    if (!book) {
      addForm.error.textContent = describe(answer, 'The book was not added');
      return;
    }
    keep(book);
    clearAddedFields();
    showAdded(book.id);
    announce(`Added “${book.title}” by ${book.author} (${book.year}) as book ${book.id}.`);
  } catch (error) {
    addForm.error.textContent = messageOf(error);
  }
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
  if (action === 'edit') openEdit(book);
  else openDelete(book);
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
    if (dialog === ui.editDialog) editing = undefined;
    else deleting = undefined;
    const button = opener;
    opener = undefined;
    if (button?.isConnected) button.focus();
    else (markedEditButton() ?? ui.booksHeading).focus();
  });
}

function openEdit(book: Book): void {
  editing = book;
  ui.editHeading.textContent = `Edit book ${book.id}`;
  editForm.fill(book);
  editForm.clearErrors();
  openDialog(ui.editDialog, editForm.input('title'));
}

ui.editCancel.addEventListener('click', () => closeDialog(ui.editDialog));
ui.editForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void busy(ui.editForm, saveEdit);
});

async function saveEdit(): Promise<void> {
  const book = editing;
  if (!book) return;
  const fields = editForm.checkedFields('Nothing was saved: check the fields marked above.');
  if (!fields) return;
  const changes = changedFields(book, fields);
  if (Object.keys(changes).length === 0) {
    editForm.error.textContent = 'Nothing to save: no field was changed.';
    return;
  }
  try {
    // Only the fields that changed: PUT is a partial update (docs/api.md "PUT /book/:id").
    const answer = await authorized('PUT', `/book/${book.id}`, changes);
    if (!answer) return;
    const saved = answer.status === 200 ? asBook(answer.data) : undefined;
    if (!saved) {
      if (answer.status === 404) forget(book.id);
      editForm.error.textContent =
        answer.status === 404
          ? describe(answer, 'This book is no longer in the collection (someone may have deleted it)')
          : describe(answer, 'The changes were not saved');
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

function openDelete(book: Book): void {
  deleting = book;
  ui.deleteText.textContent = `“${book.title}” by ${book.author} (${book.year}), book ${book.id}, will be removed from the collection. This cannot be undone.`;
  ui.deleteError.textContent = '';
  // Focus starts on Cancel: the safe choice.
  openDialog(ui.deleteDialog, ui.deleteCancel);
}

ui.deleteCancel.addEventListener('click', () => closeDialog(ui.deleteDialog));
ui.deleteConfirm.addEventListener('click', () => void busy(ui.deleteDialog, deleteBook));

async function deleteBook(): Promise<void> {
  const book = deleting;
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
    if (opener && !opener.isConnected) opener = undefined;
    closeDialog(ui.deleteDialog);
    announce(answer.status === 200 ? `Deleted “${book.title}”.` : `“${book.title}” was already gone (${answer.status} ${answer.message}).`);
  } catch (error) {
    ui.deleteError.textContent = messageOf(error);
  }
}
