// The web page (README "Web page"): sign in, then browse, filter, sort, add, edit and delete
// books through the service's own JSON API. Plain DOM: every text from the store is set with
// textContent, never parsed as HTML (the page's policy forbids it anyway: Trusted Types).
//
// This module starts the page and joins its parts, each in its own module:
//   sign-in.ts   the session: sign-in form, calls with the token, the session's end
//   table.ts     the list: one page at a time from the service, sorted and filtered there
//   list-state.ts which page: sort, filter, size and cursors, kept in the URL's fragment
//   forms.ts     add, edit and delete, each checked before it is sent
//   changes.ts   the change feed: what others change, shown as it happens
//   elements.ts  the page's elements (web/index.html), found once by id
//   import-export.ts  import a JSON or CSV file, export the collection: loaded only when
//                the person opens "Import and export" (or an import was cut short), so the
//                first load stays small
import { onChanges, startFollowing, stopFollowing } from './changes.js';
import { elements } from './elements.js';
import { importInterrupted } from './import-record.js';
import { changedElsewhere, clearForms, resumeDialog, suspendDialog } from './forms.js';
import { signOut, startSessions } from './sign-in.js';
import { clearBooks, loadBooks, refresh, showChanges } from './table.js';

// The skip link moves the focus without touching the fragment: the fragment names the list's page (list-state.ts).
elements.skipLink.addEventListener('click', (event) => {
  event.preventDefault();
  if (elements.collection.hidden) return;
  elements.booksHeading.scrollIntoView();
  elements.booksHeading.focus();
});

elements.signOut.addEventListener('click', () => {
  clearForms();
  clearBooks();
  signOut();
});

onChanges((changes) => {
  showChanges(changes);
  changedElsewhere(changes);
}, refresh);

/** import-export.ts, loaded the first time the panel opens. */
let transfer: Promise<unknown> | undefined;
function openTransfer(): void {
  if (!elements.transfer.open || transfer) return;
  elements.transferLoading.textContent = 'Loading…';
  transfer = import('./import-export.js').then(
    () => {
      elements.transferLoading.textContent = '';
    },
    () => {
      transfer = undefined;
      elements.transferLoading.textContent = 'The import and export could not be loaded. Check the connection, then close and open this again.';
    },
  );
}
elements.transfer.addEventListener('toggle', openTransfer);
// An import cut short (a reload, a closed tab): the panel opens to say so (import-export.ts).
if (importInterrupted()) elements.transfer.open = true;

startSessions({
  async began() {
    startFollowing();
    await loadBooks();
    return resumeDialog();
  },
  ended() {
    stopFollowing();
    suspendDialog();
  },
});
