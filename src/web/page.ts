// The web page's HTML (GET /) and its style sheet (GET /ui/app.css): static text, no data in
// it. Everything the store holds is put in by the page's script as text (web/src/app.ts).
// No inline script, no inline style, nothing from another origin: the page's
// Content-Security-Policy (src/routes/web-ui.ts) allows only the service's own files.

export const PAGE_TITLE = 'Book collection';

export const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light">
<title>${PAGE_TITLE}</title>
<link rel="icon" href="/ui/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/ui/app.css">
<script type="module" src="/ui/web/src/app.js"></script>
</head>
<body>
<a class="skip" href="#books-heading">Skip to the books</a>
<header class="bar">
  <h1>${PAGE_TITLE}</h1>
  <button type="button" id="sign-out" class="quiet" hidden>Sign out</button>
</header>
<main>
  <noscript><p class="error">This page needs JavaScript. The API itself is described at <a href="/docs">/docs</a>.</p></noscript>

  <section id="sign-in" class="card narrow" aria-labelledby="sign-in-heading" hidden>
    <h2 id="sign-in-heading" tabindex="-1">Sign in</h2>
    <p id="session-note" class="note" role="status"></p>
    <form id="sign-in-form" novalidate>
      <div class="field">
        <label for="username">Username</label>
        <input id="username" name="username" autocomplete="username" autocapitalize="none" spellcheck="false" required aria-describedby="sign-in-error">
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required aria-describedby="sign-in-error">
      </div>
      <p id="sign-in-error" class="error" role="alert"></p>
      <button type="submit">Sign in</button>
    </form>
  </section>

  <div id="collection" hidden>
    <section class="card" aria-labelledby="add-heading">
      <h2 id="add-heading">Add a book</h2>
      <form id="add-form" class="book-form" novalidate>
        <div class="field">
          <label for="add-title">Title</label>
          <input id="add-title" name="title" required aria-describedby="add-title-error">
          <p id="add-title-error" class="field-error"></p>
        </div>
        <div class="field">
          <label for="add-author">Author</label>
          <input id="add-author" name="author" required aria-describedby="add-author-error">
          <p id="add-author-error" class="field-error"></p>
        </div>
        <div class="field year">
          <label for="add-year">Year</label>
          <input id="add-year" name="year" inputmode="numeric" required aria-describedby="add-year-hint add-year-error">
          <p id="add-year-hint" class="hint">From -9999 to 9999</p>
          <p id="add-year-error" class="field-error"></p>
        </div>
        <p id="add-error" class="error form-error" role="alert"></p>
        <div class="actions"><button type="submit">Add book</button></div>
      </form>
    </section>

    <section class="card" aria-labelledby="books-heading">
      <h2 id="books-heading" tabindex="-1">Books</h2>
      <div class="field filter">
        <label for="filter">Filter by title or author</label>
        <input id="filter" type="search" autocomplete="off" spellcheck="false" aria-controls="books-table">
      </div>
      <p id="list-status" class="note" role="status"></p>
      <p id="list-error" class="error" role="alert"></p>
      <div class="table-wrap" id="table-wrap">
        <table id="books-table" aria-labelledby="books-heading" aria-describedby="list-status">
          <thead>
            <tr>
              <th scope="col" class="col-id" data-column="id"><button type="button">Id</button></th>
              <th scope="col" class="col-title" data-column="title"><button type="button">Title</button></th>
              <th scope="col" class="col-author" data-column="author"><button type="button">Author</button></th>
              <th scope="col" class="col-year" data-column="year"><button type="button">Year</button></th>
              <th scope="col" class="col-actions">Actions</th>
            </tr>
          </thead>
          <tbody id="books-body"></tbody>
        </table>
      </div>
      <p id="empty" class="empty" hidden></p>
      <nav id="pager" class="pager" aria-label="Pages of books" hidden>
        <button type="button" id="previous-page">Previous page</button>
        <span id="page-position"></span>
        <button type="button" id="next-page">Next page</button>
      </nav>
    </section>
  </div>
</main>

<dialog id="edit-dialog" aria-labelledby="edit-heading">
  <form id="edit-form" class="book-form" novalidate>
    <h2 id="edit-heading">Edit book</h2>
    <div class="field">
      <label for="edit-title">Title</label>
      <input id="edit-title" name="title" required aria-describedby="edit-title-error">
      <p id="edit-title-error" class="field-error"></p>
    </div>
    <div class="field">
      <label for="edit-author">Author</label>
      <input id="edit-author" name="author" required aria-describedby="edit-author-error">
      <p id="edit-author-error" class="field-error"></p>
    </div>
    <div class="field year">
      <label for="edit-year">Year</label>
      <input id="edit-year" name="year" inputmode="numeric" required aria-describedby="edit-year-hint edit-year-error">
      <p id="edit-year-hint" class="hint">From -9999 to 9999</p>
      <p id="edit-year-error" class="field-error"></p>
    </div>
    <p id="edit-error" class="error form-error" role="alert"></p>
    <div class="actions">
      <button type="submit">Save changes</button>
      <button type="button" id="edit-cancel" class="quiet">Cancel</button>
    </div>
  </form>
</dialog>

<dialog id="delete-dialog" role="alertdialog" aria-labelledby="delete-heading" aria-describedby="delete-text">
  <h2 id="delete-heading">Delete this book?</h2>
  <p id="delete-text"></p>
  <p id="delete-error" class="error" role="alert"></p>
  <div class="actions">
    <button type="button" id="delete-confirm" class="danger">Delete</button>
    <button type="button" id="delete-cancel" class="quiet">Cancel</button>
  </div>
</dialog>
</body>
</html>
`;

/** The tab's icon: a book. */
export const FAVICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 44 44">' +
  '<rect width="44" height="44" rx="8" fill="#1b1b1b"/>' +
  '<path d="M6 10h11a5 5 0 0 1 5 5v19a4 4 0 0 0-4-4H6zM38 10H27a5 5 0 0 0-5 5v19a4 4 0 0 1 4-4h12z" fill="#fff"/>' +
  '</svg>';

/** Light theme, contrast at least 4.5:1 for text, a visible focus ring, 360 px and up. */
export const STYLESHEET = `
*, *::before, *::after { box-sizing: border-box; }
html { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif; font-size: 100%; color: #1a1a1a; background: #f3f4f6; }
body { margin: 0; line-height: 1.45; }
[hidden] { display: none !important; }
h1 { font-size: 1.35rem; margin: 0; }
h2 { font-size: 1.15rem; margin: 0 0 .75rem; }
h2:focus { outline: none; }
a { color: #0b57d0; }
.skip { position: absolute; left: -999px; top: .5rem; background: #fff; padding: .5rem .75rem; z-index: 10; }
.skip:focus { left: .5rem; }
.bar { display: flex; align-items: center; justify-content: space-between; gap: 1rem; background: #1b1b1b; color: #fff; padding: .75rem 1rem; }
.bar .quiet { color: #fff; border-color: #fff; background: transparent; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem .75rem 3rem; }
.card { background: #fff; border: 1px solid #d0d4da; border-radius: .5rem; padding: 1rem; margin: 0 0 1rem; }
.narrow { max-width: 26rem; margin: 2rem auto; }
.field { display: flex; flex-direction: column; gap: .25rem; margin: 0 0 .75rem; min-width: 0; }
label { font-weight: 600; }
input { font: inherit; color: inherit; background: #fff; border: 1px solid #6b7280; border-radius: .375rem; padding: .5rem .6rem; min-height: 2.75rem; width: 100%; }
input[aria-invalid="true"] { border-color: #b3261e; border-width: 2px; }
button { font: inherit; font-weight: 600; min-height: 2.75rem; padding: .5rem 1rem; border-radius: .375rem; border: 2px solid #0b57d0; background: #0b57d0; color: #fff; cursor: pointer; }
button:hover { background: #0842a0; border-color: #0842a0; }
button:disabled { background: #e5e7eb; border-color: #9ca3af; color: #4b5563; cursor: default; }
button.quiet { background: #fff; color: #0b57d0; }
button.quiet:hover { background: #eef3fd; }
button.danger { background: #b3261e; border-color: #b3261e; }
button.danger:hover { background: #8c1d18; border-color: #8c1d18; }
:focus-visible { outline: 3px solid #0b57d0; outline-offset: 2px; }
.bar :focus-visible { outline-color: #fff; }
.error { color: #b3261e; font-weight: 600; margin: .25rem 0; }
.error:empty, .field-error:empty, .note:empty { display: none; }
.field-error { color: #b3261e; margin: 0; font-size: .95rem; }
.hint { color: #4b5563; margin: 0; font-size: .9rem; }
.note { color: #374151; margin: .25rem 0 .75rem; }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.book-form { display: grid; grid-template-columns: 1fr; gap: 0 1rem; }
.book-form .form-error, .book-form .actions { grid-column: 1 / -1; }
@media (min-width: 48rem) {
  #add-form { grid-template-columns: 2fr 2fr 1fr; align-items: start; }
}
.filter { max-width: 28rem; }
.table-wrap { overflow-x: auto; }
table { width: 100%; border-collapse: collapse; table-layout: fixed; }
th, td { text-align: left; padding: .4rem .5rem; border-bottom: 1px solid #d0d4da; vertical-align: middle; overflow-wrap: anywhere; }
thead th { border-bottom: 2px solid #6b7280; white-space: nowrap; vertical-align: bottom; }
thead th.col-actions { padding-bottom: .65rem; }
th button { background: none; border: none; color: #1a1a1a; padding: .25rem .25rem; min-height: 2.5rem; font-weight: 700; }
th button:hover { background: #eef3fd; }
th button::after { content: ""; display: inline-block; width: 1em; }
th[aria-sort="ascending"] button::after { content: "\\25B2" / ""; }
th[aria-sort="descending"] button::after { content: "\\25BC" / ""; }
.col-id { width: 4.5rem; }
.col-year { width: 4.5rem; }
.col-actions { width: 10.5rem; }
.row-actions { display: flex; flex-wrap: wrap; gap: .35rem; }
.row-actions button { min-height: 2.5rem; padding: .25rem .6rem; }
tbody tr:nth-child(even) { background: #f8f9fb; }
tr.changed { background: #fff7d6 !important; }
.empty { font-style: italic; color: #374151; }
.pager { display: flex; flex-wrap: wrap; align-items: center; gap: .5rem 1rem; margin-top: .75rem; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
dialog { border: 1px solid #6b7280; border-radius: .5rem; padding: 1rem; width: min(32rem, calc(100vw - 1.5rem)); color: #1a1a1a; }
dialog::backdrop { background: rgba(0, 0, 0, .45); }
@media (max-width: 40rem) {
  main { padding: .75rem .5rem 2rem; }
  .card { padding: .75rem; }
  /* Narrow: columns as wide as their content needs, words kept whole where they fit. */
  table { table-layout: auto; font-size: .9375rem; }
  .col-id, .col-year, .col-actions { width: auto; }
  th, td { padding: .35rem .25rem; overflow-wrap: break-word; }
  th button { padding: .25rem 0; }
  th:not([aria-sort]) button::after { display: none; }
  .row-actions { flex-direction: column; }
  .row-actions button { padding: .2rem .4rem; font-size: .875rem; min-height: 2.5rem; }
}
`;
