// The web page (README "Web page"): sign in, then browse, filter, sort, add, edit and delete
// books through the service's own JSON API. Plain DOM: every text from the store is set with
// textContent, never parsed as HTML (the page's policy forbids it anyway: Trusted Types).
//
// This module starts the page and joins its parts, each in its own module:
//   sign-in.ts   the session: sign-in form, calls with the token, the session's end
//   table.ts     the list: fetched once, sorted, filtered, shown a page at a time
//   forms.ts     add, edit and delete, each checked before it is sent
//   elements.ts  the page's elements (web/index.html), found once by id
import { elements } from './elements.js';
import { clearForms, resumeDialog, suspendDialog } from './forms.js';
import { signOut, startSessions } from './sign-in.js';
import { clearBooks, loadBooks } from './table.js';

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
