// Every element of the page (web/index.html) that the script uses, found once by its id and
// checked for its kind: a page and script that disagree fail here, at load, naming the id,
// rather than later in a click handler. The rest of the script takes its elements from here;
// the fields of the add and edit forms are made from a template (book-form.ts). The import and
// export panel's own elements are found by import-export.ts when it loads (only the panel itself
// is here: opening it loads that module).

export function byId<T extends HTMLElement>(id: string, kind: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof kind)) throw new Error(`#${id} is missing from the page, or is not a ${kind.name}`);
  return element;
}

export const elements = {
  signOut: byId('sign-out', HTMLButtonElement),
  skipLink: byId('skip', HTMLAnchorElement),

  // Signing in
  signIn: byId('sign-in', HTMLElement),
  sessionNote: byId('session-note', HTMLParagraphElement),
  signInForm: byId('sign-in-form', HTMLFormElement),
  username: byId('username', HTMLInputElement),
  password: byId('password', HTMLInputElement),
  signInError: byId('sign-in-error', HTMLParagraphElement),

  // The collection: the add form and the list
  collection: byId('collection', HTMLDivElement),
  addForm: byId('add-form', HTMLFormElement),
  booksHeading: byId('books-heading', HTMLHeadingElement),
  transfer: byId('transfer', HTMLDetailsElement),
  transferLoading: byId('transfer-loading', HTMLParagraphElement),
  filter: byId('filter', HTMLInputElement),
  pageSize: byId('page-size', HTMLSelectElement),
  listStatus: byId('list-status', HTMLParagraphElement),
  listError: byId('list-error', HTMLParagraphElement),
  feedStatus: byId('feed-status', HTMLParagraphElement),
  tableWrap: byId('table-wrap', HTMLDivElement),
  table: byId('books-table', HTMLTableElement),
  body: byId('books-body', HTMLTableSectionElement),
  empty: byId('empty', HTMLParagraphElement),
  pager: byId('pager', HTMLElement),
  previous: byId('previous-page', HTMLButtonElement),
  next: byId('next-page', HTMLButtonElement),
  position: byId('page-position', HTMLSpanElement),

  // The dialogs
  editDialog: byId('edit-dialog', HTMLDialogElement),
  editHeading: byId('edit-heading', HTMLHeadingElement),
  editForm: byId('edit-form', HTMLFormElement),
  editNews: byId('edit-news', HTMLDivElement),
  editNewsText: byId('edit-news-text', HTMLParagraphElement),
  editNewsLoad: byId('edit-news-load', HTMLButtonElement),
  editCancel: byId('edit-cancel', HTMLButtonElement),
  deleteDialog: byId('delete-dialog', HTMLDialogElement),
  deleteText: byId('delete-text', HTMLParagraphElement),
  deleteError: byId('delete-error', HTMLParagraphElement),
  deleteConfirm: byId('delete-confirm', HTMLButtonElement),
  deleteCancel: byId('delete-cancel', HTMLButtonElement),
  conflictDialog: byId('conflict-dialog', HTMLDialogElement),
  conflictText: byId('conflict-text', HTMLParagraphElement),
  conflictValues: byId('conflict-values', HTMLDListElement),
  conflictReload: byId('conflict-reload', HTMLButtonElement),
  conflictProceed: byId('conflict-proceed', HTMLButtonElement),

  /** A book's fields, copied into both forms. */
  bookFields: byId('book-fields', HTMLTemplateElement),
};
