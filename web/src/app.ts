// The web page (README "Web page"): sign in, then browse, filter, sort, add, edit and delete
// books through the service's own JSON API. Plain DOM: every text from the store is set with
// textContent, never parsed as HTML (the page's policy forbids it anyway: Trusted Types).
//
// This module starts the page and joins its parts, each in its own module:
//   sign-in.ts   the session: sign-in form, calls with the token, the session's end
//   table.ts     the list: one page at a time from the service, sorted and filtered there
//   list-state.ts which page: sort, filter, size and cursors, kept in the URL's fragment
//   forms.ts     add, edit and delete, each checked before it is sent
//   elements.ts  the page's elements (web/index.html), found once by id
import { elements } from './elements.js';
import { clearForms, resumeDialog, suspendDialog } from './forms.js';
import { signOut, startSessions } from './sign-in.js';
import { clearBooks, loadBooks } from './table.js';

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

startSessions({
  async began() {
    await loadBooks();
    return resumeDialog();
  },
  ended: suspendDialog,
});
