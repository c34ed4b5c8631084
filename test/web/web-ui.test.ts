// The web page at GET / (README "Web page"), driven in a real headless Chromium with
// playwright-core the way a person reads it: by roles and labels. Sign in, the empty state, add,
// filter, sort, edit one field (a partial PUT), delete through the dialog, validation and the
// service's own 400 and 404 in words, a hostile title shown as text, 10,000 books, the session
// ending (15 minutes, or a 401) with the half-filled form kept, and the failed-login 429 with its
// wait. Issue 22: an add whose answer is lost or is 503 sent again with its Idempotency-Key,
// edits and deletes with If-Match and the 412 dialog, every row a card at 360 px. Issue 31: the
// list asks the service for one page at a time (limit, cursor, sort, q): the count, Next and
// Previous, sorting and the page size, the filter as one types with older answers dropped, a link
// that keeps the page, a refused cursor, edit and delete from a filtered page. Every page is
// watched: no console error, no Content-Security-Policy violation, no page error, no request to
// another origin. Screenshots at 360 and 1280 px go to test-artifacts/web-ui/.
// Chromium: test/helpers/infra/chromium.ts; the watched page: test/helpers/client/web-page.ts.
import type { Browser, Locator, Page, Request, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WEB_UI_CSP } from '../../src/routes/web-ui.js';
import { launchChromium } from '../helpers/infra/chromium.js';
import { startTcpProxy } from '../helpers/infra/tcp-proxy.js';
import { signHmac, nowSeconds } from '../helpers/client/tokens.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { NARROW, WIDE, openWatched, screenshot, signIn, type Watched } from '../helpers/client/web-page.js';
import { useService } from '../helpers/service/start-service.js';
import { openSqlite } from '../helpers/stores/sqlite.js';
import { describeIf } from '../helpers/requirements.js';

const TEST_TIMEOUT_MS = 30_000;
/** How long the short-lived token of the 401 test lives, in seconds. */
const LIFETIME_S = 10;
const XSS_TITLE = '<img src=x onerror=alert(1)>';

/** The problems a page may have for a reason the test caused (a 401/429/400/404 it provoked is logged by Chromium). */
function unexpected(problems: string[], allowedStatuses: number[] = []): string[] {
  return problems.filter((problem) => !allowedStatuses.some((status) => problem.includes(`status of ${status}`)));
}

function addRegion(page: Page): Locator {
  return page.getByRole('region', { name: 'Add a book' });
}

function table(page: Page): Locator {
  return page.getByRole('table', { name: 'Books' });
}

async function addBook(page: Page, book: { title: string; author: string; year: string }): Promise<void> {
  const form = addRegion(page);
  await form.getByLabel('Title').fill(book.title);
  await form.getByLabel('Author').fill(book.author);
  await form.getByLabel('Year').fill(book.year);
  await form.getByRole('button', { name: 'Add book' }).click();
}

/** The table's body rows as arrays of cell texts (id, title, author, year). */
async function rows(page: Page): Promise<string[][]> {
  return table(page)
    .locator('tbody tr')
    .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent ?? '')));
}

// Requirement: it drives a real browser; skipped (reason printed) only outside CI where Chromium is missing.
describeIf('chromium')('the web page in headless Chromium', () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
  });

  describe('one service, the built-in account', () => {
    const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    it(
      'GET / is the page under its own policy; signing in shows the empty collection (screenshots at 360 and 1280 px)',
      async () => {
        for (const viewport of [NARROW, WIDE]) {
          const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: viewport });
          try {
            const navigation = await page.goto(`${service.current.baseUrl}/`);
            expect(navigation?.status()).toBe(200);
            expect(navigation?.headers()['content-security-policy']).toBe(WEB_UI_CSP);
            expect(await page.title()).toBe('Book collection');
            await expect.poll(() => page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
            await signIn(page);
            await expect.poll(() => page.getByText('The collection is empty.').isVisible()).toBe(true);
            expect(await table(page).isVisible()).toBe(false);
            // The token is in this tab's sessionStorage, never localStorage or a cookie.
            expect(await page.evaluate('localStorage.length')).toBe(0);
            expect(await page.context().cookies()).toEqual([]);
            expect(await page.evaluate('Object.keys(sessionStorage)')).toEqual(['book-collection.token']);
            // Nothing is wider than the viewport (no sideways scrolling at 360 px).
            expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(viewport.width);
            await screenshot(page, `empty-${viewport.width}`);
            expect(problems).toEqual([]);
          } finally {
            await close();
          }
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'add, see it in the table, filter, sort, edit one field (only it is sent and only it changes), delete through the dialog',
      async () => {
        const { page, problems, sent, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await addBook(page, { title: 'Dune', author: 'Frank Herbert', year: '1965' });
          await addBook(page, { title: 'Anathem', author: 'Neal Stephenson', year: '2008' });
          await addBook(page, { title: 'Cryptonomicon', author: 'Neal Stephenson', year: '1999' });
          await expect.poll(() => rows(page)).toHaveLength(3);
          const ids = (await rows(page)).map((cells) => cells[0]);
          expect((await rows(page)).map((cells) => cells.slice(1))).toEqual([
            ['Dune', 'Frank Herbert', '1965'],
            ['Anathem', 'Neal Stephenson', '2008'],
            ['Cryptonomicon', 'Neal Stephenson', '1999'],
          ]);
          // Stored by the service as the table shows them.
          const listed = await service.client.request('GET', '/books', { token });
          expect((listed.body.data as Array<{ id: number }>).map((book) => String(book.id))).toEqual(ids);

          // Filter: by author or title, as one types.
          const filter = page.getByLabel('Filter by title or author');
          await filter.pressSequentially('stephen');
          await expect.poll(async () => (await rows(page)).map((cells) => cells[1])).toEqual(['Anathem', 'Cryptonomicon']);
          await filter.fill('DUNE');
          await expect.poll(async () => (await rows(page)).map((cells) => cells[1])).toEqual(['Dune']);
          await filter.fill('nothing like it');
          await expect.poll(() => page.getByText('No book matches “nothing like it”.').isVisible()).toBe(true);
          await filter.fill('');

          // Sort: by id at first; a header button sorts by its column, again reverses it.
          const idHeader = table(page).getByRole('columnheader', { name: 'Id' });
          const yearHeader = table(page).getByRole('columnheader', { name: 'Year' });
          expect(await idHeader.getAttribute('aria-sort')).toBe('ascending');
          await yearHeader.getByRole('button', { name: 'Year' }).click();
          await expect.poll(async () => (await rows(page)).map((cells) => cells[3])).toEqual(['1965', '1999', '2008']);
          expect(await yearHeader.getAttribute('aria-sort')).toBe('ascending');
          expect(await idHeader.getAttribute('aria-sort')).toBeNull();
          await yearHeader.getByRole('button', { name: 'Year' }).click();
          await expect.poll(async () => (await rows(page)).map((cells) => cells[3])).toEqual(['2008', '1999', '1965']);
          expect(await yearHeader.getAttribute('aria-sort')).toBe('descending');
          await table(page).getByRole('button', { name: 'Title' }).click();
          await expect.poll(async () => (await rows(page)).map((cells) => cells[1])).toEqual(['Anathem', 'Cryptonomicon', 'Dune']);

          // Edit one field: the PUT carries only that field; the stored book changed only there.
          const duneId = ids[0] as string;
          await table(page).getByRole('row', { name: /Dune/ }).getByRole('button', { name: /^Edit/ }).click();
          const editor = page.getByRole('dialog', { name: `Edit book ${duneId}` });
          expect(await editor.getByLabel('Title').inputValue()).toBe('Dune');
          await editor.getByLabel('Year').fill('1966');
          const put = page.waitForRequest((request) => request.method() === 'PUT');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          expect((await put).url()).toBe(`${service.current.baseUrl}/book/${duneId}`);
          expect((await put).postDataJSON()).toEqual({ year: 1966 });
          await expect.poll(() => editor.isVisible()).toBe(false);
          await expect.poll(async () => (await rows(page)).find((cells) => cells[0] === duneId)).toEqual([duneId, 'Dune', 'Frank Herbert', '1966']);
          const stored = await service.client.request('GET', `/book/${duneId}`, { token });
          expect(stored.body.data).toEqual({ id: Number(duneId), title: 'Dune', author: 'Frank Herbert', year: 1966 });

          // Delete: an accessible dialog, Cancel keeps the book, Delete removes it.
          const deleteDune = () => table(page).getByRole('row', { name: /Dune/ }).getByRole('button', { name: /^Delete/ }).click();
          await deleteDune();
          const confirm = page.getByRole('alertdialog', { name: 'Delete this book?' });
          await expect.poll(() => confirm.isVisible()).toBe(true);
          expect(await confirm.innerText()).toContain('“Dune” by Frank Herbert (1966)');
          await confirm.getByRole('button', { name: 'Cancel' }).click();
          await expect.poll(() => confirm.isVisible()).toBe(false);
          expect(await rows(page)).toHaveLength(3);
          await deleteDune();
          await confirm.getByRole('button', { name: 'Delete' }).click();
          await expect.poll(() => rows(page)).toHaveLength(2);
          expect((await service.client.request('GET', `/book/${duneId}`, { token })).status).toBe(404);

          expect(sent.filter((request) => request.method === 'PUT').map((request) => request.body)).toEqual(['{"year":1966}']);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'late answers undo nothing: a list read before two adds still shows them, and the next book typed while one is sent is kept',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        // Each held answer is read from the service at once but reaches the page only when released.
        const hold = async (glob: string | RegExp): Promise<() => void> => {
          let release!: () => void;
          const held = new Promise<void>((resolve) => {
            release = resolve;
          });
          await page.route(
            glob,
            async (route) => {
              const response = await route.fetch();
              await held;
              // The page may have called the request off meanwhile (a newer list replaced it).
              await route.fulfill({ response }).catch(() => undefined);
            },
            { times: 1 },
          );
          return release;
        };
        try {
          await page.goto(`${service.current.baseUrl}/`);
          const releaseList = await hold(/\/books\?/);
          const releaseFirstAdd = await hold('**/book');
          await signIn(page);
          const form = addRegion(page);
          await addBook(page, { title: 'Solaris', author: 'Stanisław Lem', year: '1961' });
          // Typed while Solaris is being sent: a new title, the same author again.
          await form.getByLabel('Title').fill('The Cyberiad');
          await form.getByLabel('Author').fill('Stanisław Lem');
          releaseFirstAdd();
          await expect.poll(() => page.getByText(/^Added “Solaris”/).isVisible()).toBe(true);
          expect(await form.getByLabel('Title').inputValue()).toBe('The Cyberiad');
          expect(await form.getByLabel('Author').inputValue()).toBe('Stanisław Lem');
          expect(await form.getByLabel('Year').inputValue()).toBe('');
          await form.getByLabel('Year').fill('1965');
          await form.getByRole('button', { name: 'Add book' }).click();
          await expect.poll(() => page.getByText(/^Added “The Cyberiad”/).isVisible()).toBe(true);

          // The list the service read before either add arrives last, and is not shown: the page
          // read after the last add is, with both.
          releaseList();
          await page.waitForTimeout(300);
          await expect.poll(() => page.locator('#list-status').innerText()).toMatch(/^Added “The Cyberiad”.* Showing 1–/);
          const listed = (await service.client.request('GET', '/books', { token })).body.data as Array<{ id: number; title: string }>;
          expect(listed.map((book) => book.title)).toEqual(expect.arrayContaining(['Solaris', 'The Cyberiad']));
          expect((await rows(page)).map((cells) => cells[0])).toEqual(listed.map((book) => String(book.id)));
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "checks fields before sending; the service's own 400 and 404 are shown in words next to the form",
      async () => {
        const { page, problems, sent, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await expect.poll(() => page.getByText(/Showing|empty/).first().isVisible()).toBe(true);
          const form = addRegion(page);
          const before = sent.length;
          await addBook(page, { title: '   ', author: 'x'.repeat(501), year: '10000' });
          await expect.poll(() => form.getByRole('alert').innerText()).toContain('The book was not added');
          expect(await form.getByLabel('Title').getAttribute('aria-invalid')).toBe('true');
          expect(await form.getByText('Title is required.').isVisible()).toBe(true);
          expect(await form.getByText('Author must be at most 500 characters (it has 501).').isVisible()).toBe(true);
          expect(await form.getByText('Year must be from -9999 to 9999.').isVisible()).toBe(true);
          expect(sent.slice(before).filter((request) => request.method === 'POST')).toEqual([]);

          // What the service refuses, shown as it answered: the year arrives as a string.
          await page.route('**/book', (route) =>
            route.continue({ postData: JSON.stringify({ ...(route.request().postDataJSON() as object), year: '1999' }) }),
          );
          await addBook(page, { title: 'Refused', author: 'The service', year: '1999' });
          await expect.poll(() => form.getByRole('alert').innerText()).toBe(
            'The book was not added: the service found the values invalid (HTTP 400 “Invalid input”).',
          );
          expect(await form.getByLabel('Title').inputValue()).toBe('Refused'); // kept, to correct and send again
          await page.unroute('**/book');

          // A book deleted elsewhere: editing it answers 404, shown in the dialog.
          const book = await service.client.createBook(token, { title: 'Soon gone', author: 'Elsewhere', year: 2001 });
          await page.reload();
          await table(page).getByRole('row', { name: /Soon gone/ }).getByRole('button', { name: /^Edit/ }).click();
          // The dialog reads the book before it opens: delete it only once the dialog shows it.
          const editor = page.getByRole('dialog', { name: `Edit book ${book.id}` });
          await expect.poll(() => editor.getByLabel('Author').inputValue()).toBe('Elsewhere');
          await service.client.request('DELETE', `/book/${book.id}`, { token });
          await editor.getByLabel('Author').fill('Someone');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          await expect.poll(() => editor.getByRole('alert').innerText()).toContain('(HTTP 404 “Book not found”)');
          await editor.getByRole('button', { name: 'Cancel' }).click();
          await expect.poll(() => table(page).getByRole('row', { name: /Soon gone/ }).count()).toBe(0);

          expect(unexpected(problems, [400, 404])).toEqual([]);
        } finally {
          await close();
        }
      },
      2 * TEST_TIMEOUT_MS, // the longest walk of the page; it ran out at 30 s once under CI load
    );

    it(
      'a title of <img src=x onerror=alert(1)> is shown as those characters, and nothing runs',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await addBook(page, { title: XSS_TITLE, author: '<script>alert(2)</script>', year: '2024' });
          const row = table(page).getByRole('row', { name: /onerror/ });
          await expect.poll(() => row.count()).toBe(1);
          expect(await row.locator('td').nth(1).textContent()).toBe(XSS_TITLE);
          expect(await row.locator('td').nth(2).textContent()).toBe('<script>alert(2)</script>');
          expect(await table(page).locator('img, script').count()).toBe(0);
          await row.getByRole('button', { name: /^Delete/ }).click();
          expect(await page.getByRole('alertdialog').innerText()).toContain(XSS_TITLE);
          await page.keyboard.press('Escape');
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'keyboard only: sign in, add a book and sort without a pointer',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: NARROW });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('username');
          await page.keyboard.type(TEST_USERNAME);
          await page.keyboard.press('Tab');
          await page.keyboard.type(TEST_PASSWORD);
          await page.keyboard.press('Enter');
          await expect.poll(() => page.getByRole('heading', { name: 'Add a book' }).isVisible()).toBe(true);
          await addRegion(page).getByLabel('Title').focus();
          await page.keyboard.type('Typed only');
          await page.keyboard.press('Tab');
          await page.keyboard.type('Key Board');
          await page.keyboard.press('Tab');
          await page.keyboard.type('1999');
          await page.keyboard.press('Enter');
          await expect.poll(() => table(page).getByRole('row', { name: /Typed only/ }).count()).toBe(1);
          expect(await page.evaluate('document.activeElement?.id')).toBe('add-title');
          await table(page).getByRole('button', { name: 'Author' }).focus();
          await page.keyboard.press('Enter');
          expect(await table(page).getByRole('columnheader', { name: 'Author' }).getAttribute('aria-sort')).toBe('ascending');
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'when the 15 minutes are over the page says so and shows the sign-in form; the half-filled form survives signing in again',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.clock.install();
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await expect.poll(() => addRegion(page).isVisible()).toBe(true);
          await addRegion(page).getByLabel('Title').fill('Half written');
          await addRegion(page).getByLabel('Author').fill('Still here');
          await page.clock.fastForward('15:01');
          await expect.poll(() => page.getByRole('status').filter({ hasText: 'Your session has ended' }).isVisible()).toBe(true);
          expect(await page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
          expect(await addRegion(page).isVisible()).toBe(false);
          expect(await page.evaluate('sessionStorage.length')).toBe(0);
          await signIn(page);
          await expect.poll(() => addRegion(page).isVisible()).toBe(true);
          expect(await addRegion(page).getByLabel('Title').inputValue()).toBe('Half written');
          expect(await addRegion(page).getByLabel('Author').inputValue()).toBe('Still here');
          // Back in the field the person was typing in.
          await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('add-author');
          await addRegion(page).getByLabel('Year').fill('2025');
          await addRegion(page).getByRole('button', { name: 'Add book' }).click();
          await expect.poll(() => table(page).getByRole('row', { name: /Half written/ }).count()).toBe(1);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a 401 from the service (a token that ran out while the page still counted it valid) returns to sign-in; the open edit survives',
      { timeout: TEST_TIMEOUT_MS },
      async () => {
        // A real token of this service that expires in 9 to 10 s; the page's clock is held still,
        // so only the service sees it expire (a client clock running behind). The page must show
        // its first rows and open the editor before then: 0.5 to 1.1 s alone with both cores
        // busy, longer beside the rest of the suite. With 2 to 3 s (as this test had) the list
        // itself was sometimes refused, the page went back to sign-in before the row appeared,
        // and the test timed out (2 runs in about 6).
        const shortLived = await signHmac({ exp: nowSeconds() + LIFETIME_S });
        const book = await service.client.createBook(token, { title: 'Edited across sign-ins', author: 'Before', year: 1990 });
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE, setup: async (context) => {
          // The tab's saved session, as the page keeps it, saying the token has ten minutes left.
          await context.addInitScript({
            content: `if (location.protocol === 'http:' && sessionStorage.getItem('book-collection.token') === null) {
              sessionStorage.setItem('book-collection.token', JSON.stringify({ token: ${JSON.stringify(shortLived)}, expiresAt: Date.now() + 600000 }));
            }`,
          });
        } });
        try {
          // Paused well ahead of the time it was installed at: on a loaded machine more than
          // 100 ms can pass between the two calls, and pausing in the page's past is refused.
          const installedAt = Date.now();
          await page.clock.install({ time: installedAt });
          await page.clock.pauseAt(installedAt + 10_000);
          await page.goto(`${service.current.baseUrl}/`);
          const row = table(page).getByRole('row', { name: /Edited across sign-ins/ });
          await expect.poll(() => row.count()).toBe(1);
          await row.getByRole('button', { name: /^Edit/ }).click();
          const editor = page.getByRole('dialog', { name: `Edit book ${book.id}` });
          await editor.getByLabel('Author').fill('After');
          await expect.poll(() => nowSeconds() > (JSON.parse(Buffer.from(shortLived.split('.')[1] ?? '', 'base64url').toString()) as { exp: number }).exp, { timeout: (LIFETIME_S + 2) * 1000 }).toBe(true);
          const refused = page.waitForResponse((response) => response.request().method() === 'PUT');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          expect((await refused).status()).toBe(401);
          await expect.poll(() => page.getByRole('status').filter({ hasText: 'no longer accepts your session' }).isVisible()).toBe(true);
          expect(await editor.isVisible()).toBe(false);
          await page.clock.resume();
          await signIn(page);
          await expect.poll(() => editor.isVisible()).toBe(true);
          expect(await editor.getByLabel('Author').inputValue()).toBe('After');
          const saved = page.waitForRequest((request) => request.method() === 'PUT');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          expect((await saved).postDataJSON()).toEqual({ author: 'After' });
          await expect.poll(() => editor.isVisible()).toBe(false);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).body.data).toEqual({ ...book, author: 'After' });
          expect(unexpected(problems, [401])).toEqual([]);
        } finally {
          await close();
        }
      },

    );

    it(
      '10,000 books: 50 at a time from the service, filtered and sorted by it; no request for the whole collection',
      async () => {
        const existing = (await service.client.request('GET', '/books', { token })).body.data as unknown[];
        const database = openSqlite(service.current.testStore.url.replace(/^sqlite:/, ''));
        const insert = database.prepare('insert into books (title, author, year) values (?, ?, ?)');
        database.transaction(() => {
          for (let i = 1; i <= 10_000 - existing.length; i++) insert.run(`Volume ${i}`, `Author ${i % 97}`, (i % 4000) - 1000);
        })();
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          const lists: string[] = [];
          page.on('request', (request) => {
            if (new URL(request.url()).pathname === '/books') lists.push(new URL(request.url()).search);
          });
          await page.goto(`${service.current.baseUrl}/`);
          const started = Date.now();
          await signIn(page);
          await expect.poll(() => page.getByText('Showing 1–50 of 10,000 books').isVisible()).toBe(true);
          const loaded = Date.now() - started;
          expect(await table(page).locator('tbody tr').count()).toBe(50);
          expect(await page.getByText('Page 1 of 200').isVisible()).toBe(true);
          await page.getByRole('button', { name: 'Next page' }).click();
          await expect.poll(() => page.getByText('Page 2 of 200').isVisible()).toBe(true);
          let t = Date.now();
          await page.getByLabel('Filter by title or author').fill('Volume 999');
          await expect.poll(async () => (await rows(page)).map((cells) => cells[1])).toEqual(['Volume 999', 'Volume 9990', 'Volume 9991', 'Volume 9992', 'Volume 9993', 'Volume 9994', 'Volume 9995', 'Volume 9996', 'Volume 9997', 'Volume 9998', 'Volume 9999'].filter((title) => Number(title.slice(7)) <= 10_000 - existing.length));
          const filtered = Date.now() - t;
          await page.getByLabel('Filter by title or author').fill('');
          t = Date.now();
          await table(page).getByRole('button', { name: 'Year' }).click();
          await expect.poll(async () => (await rows(page))[0]?.[3]).toBe('-1000');
          const sorted = Date.now() - t;
          // Timings are reported, not asserted: on a loaded two-core CI machine a browser's wall
          // clock says more about the neighbours than about the page (a 1 s bound failed at 2.1 s).
          // What keeps the page fast at any size is asserted below: it only ever asks for pages of 50.
          console.log(`10,000 books in Chromium: signed in to first page ${loaded} ms, filter ${filtered} ms, sort ${sorted} ms`);
          expect(lists.filter((search) => !/[?&]limit=50(&|$)/.test(search))).toEqual([]);
          await page.setViewportSize(NARROW);
          await screenshot(page, 'books-360', false);
          await page.setViewportSize(WIDE);
          await screenshot(page, 'books-1280', false);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('issue 22: adds that are safe to repeat, edits and deletes that never undo another person’s save, cards at 360 px', () => {
    const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    /** The stored books with `title` (read through the API, not the page). */
    async function storedTitled(title: string): Promise<Array<{ id: number; title: string; author: string; year: number }>> {
      const listed = await service.client.request('GET', '/books', { token });
      return (listed.body.data as Array<{ id: number; title: string; author: string; year: number }>).filter((book) => book.title === title);
    }

    /** The ETag the service gives the book now. */
    async function etagOf(id: number): Promise<string | null> {
      return (await service.client.request('GET', `/book/${id}`, { token })).headers.get('etag');
    }

    /** Every request the page sends to `method` `path`, with its headers, and the answer's status (none if it was lost). */
    function watchRequests(page: Page, method: string, path: string) {
      const seen: Array<{ request: Request; headers: Record<string, string>; status?: number; replayed?: string | undefined }> = [];
      page.on('request', (request) => {
        if (request.method() === method && new URL(request.url()).pathname === path) seen.push({ request, headers: request.headers() });
      });
      page.on('response', (response) => {
        const entry = seen.find((item) => item.request === response.request());
        if (!entry) return;
        entry.status = response.status();
        entry.replayed = response.headers()['idempotent-replayed'];
      });
      return seen;
    }

    it(
      'an add whose answer is lost on the way back is sent again with the same Idempotency-Key: one book, shown once',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        const keys: Array<string | undefined> = [];
        try {
          // The first POST reaches the service (which stores the book) but its answer never reaches the page.
          await page.route('**/book', async (route) => {
            if (route.request().method() !== 'POST') return route.fallback();
            keys.push(route.request().headers()['idempotency-key']);
            if (keys.length > 1) return route.continue();
            await route.fetch();
            return route.abort('connectionreset');
          });
          const posts = watchRequests(page, 'POST', '/book');
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await addBook(page, { title: 'Answer lost', author: 'On the way back', year: '2012' });
          await expect.poll(() => page.getByText(/^Added “Answer lost”/).isVisible()).toBe(true);

          const stored = await storedTitled('Answer lost');
          expect(stored).toHaveLength(1);
          // The page reads its page again after the add: the row comes with that answer.
          await expect.poll(() => table(page).getByRole('row', { name: /Answer lost/ }).count()).toBe(1);
          expect((await rows(page)).filter((cells) => cells[1] === 'Answer lost')).toEqual([[String(stored[0]?.id), 'Answer lost', 'On the way back', '2012']]);
          expect(keys).toHaveLength(2);
          expect(keys[0]).toMatch(/^[0-9a-f-]{32,36}$/);
          expect(keys[1]).toBe(keys[0]);
          // The second answer is the first one, replayed by the service: nothing was stored twice.
          await expect.poll(() => posts[1]?.status).toBe(201);
          expect(posts[1]?.replayed).toBe('true');

          // The next add is another add: a new key.
          await addBook(page, { title: 'Next one', author: 'New key', year: '2013' });
          await expect.poll(() => page.getByText(/^Added “Next one”/).isVisible()).toBe(true);
          expect(keys).toHaveLength(3);
          expect(keys[2]).not.toBe(keys[0]);
          expect(problems.filter((problem) => !problem.includes('ERR_CONNECTION_RESET'))).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'an add answered 503 is tried five times with one key and growing pauses, then the 503 is said in words; sending it again keeps the key',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        const tries: Array<{ key: string | undefined; at: number }> = [];
        let storeDown = true;
        try {
          await page.route('**/book', (route) => {
            if (route.request().method() !== 'POST') return route.fallback();
            tries.push({ key: route.request().headers()['idempotency-key'], at: Date.now() });
            if (!storeDown) return route.continue();
            return route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ status: 503, message: 'Store unavailable', data: null }) });
          });
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await addBook(page, { title: 'Store was down', author: 'Patient', year: '2020' });
          const form = addRegion(page);
          await expect.poll(() => form.getByRole('alert').innerText(), { timeout: 10_000 }).toBe(
            'The book was not added: the service cannot reach its store; try again shortly (HTTP 503 “Store unavailable”).',
          );
          expect(tries).toHaveLength(5);
          expect(new Set(tries.map((attempt) => attempt.key)).size).toBe(1);
          const pauses = tries.slice(1).map((attempt, index) => attempt.at - (tries[index]?.at ?? 0));
          // 0.3, 0.6, 1.2, 2.4 s (each measured from one request to the next, so a little more).
          [300, 600, 1200, 2400].forEach((planned, index) => expect(pauses[index]).toBeGreaterThanOrEqual(planned - 50));
          expect(await storedTitled('Store was down')).toEqual([]);
          expect(await form.getByLabel('Title').inputValue()).toBe('Store was down'); // kept, to send again

          storeDown = false;
          await form.getByRole('button', { name: 'Add book' }).click();
          await expect.poll(() => page.getByText(/^Added “Store was down”/).isVisible()).toBe(true);
          expect(tries).toHaveLength(6);
          expect(tries[5]?.key).toBe(tries[0]?.key);
          expect(await storedTitled('Store was down')).toHaveLength(1);
          expect(problems.filter((problem) => !problem.includes('status of 503'))).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a stale edit: the form opens with the current values; a 412 shows the book as it is now, Reload loads it, Overwrite writes what the person typed',
      async () => {
        const book = await service.client.createBook(token, { title: 'Stale edit', author: 'First author', year: 2000 });
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: NARROW });
        try {
          const puts = watchRequests(page, 'PUT', `/book/${book.id}`);
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          const row = table(page).getByRole('row', { name: /Stale edit/ });
          await expect.poll(() => row.count()).toBe(1);
          // Changed after the list was read: Edit reads the book again and shows it as it is now.
          await service.client.request('PUT', `/book/${book.id}`, { token, body: { year: 2001 } });
          await row.getByRole('button', { name: /^Edit/ }).click();
          const editor = page.getByRole('dialog', { name: `Edit book ${book.id}` });
          await expect.poll(() => editor.isVisible()).toBe(true);
          expect(await editor.getByLabel('Year').inputValue()).toBe('2001');
          const openedTag = await etagOf(book.id);

          // Someone else saves while the dialog is open; the person's save is refused (412), nothing written.
          await service.client.request('PUT', `/book/${book.id}`, { token, body: { author: 'Someone else' } });
          await editor.getByLabel('Title').fill('Mine');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          const conflict = page.getByRole('alertdialog', { name: /changed since you opened it/ });
          await expect.poll(() => conflict.isVisible()).toBe(true);
          expect(await conflict.innerText()).toMatch(/Title\s+Stale edit\s+Author\s+Someone else\s+Year\s+2001/);
          expect(puts[0]?.headers['if-match']).toBe(openedTag);
          expect(puts[0]?.status).toBe(412);
          await screenshot(page, 'conflict-360', false);

          // Reload: the current values and version in the form, nothing written.
          await conflict.getByRole('button', { name: 'Reload' }).click();
          await expect.poll(() => conflict.isVisible()).toBe(false);
          expect(await editor.isVisible()).toBe(true);
          expect(await editor.getByLabel('Title').inputValue()).toBe('Stale edit');
          expect(await editor.getByLabel('Author').inputValue()).toBe('Someone else');
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).body.data).toEqual({ ...book, author: 'Someone else', year: 2001 });
          expect(puts).toHaveLength(1);

          // Second try: changed again meanwhile; Overwrite writes the person's values over it.
          await editor.getByLabel('Year').fill('2002');
          await service.client.request('PUT', `/book/${book.id}`, { token, body: { title: 'Renamed elsewhere' } });
          const newestTag = await etagOf(book.id);
          await editor.getByRole('button', { name: 'Save changes' }).click();
          await expect.poll(() => conflict.isVisible()).toBe(true);
          expect(await conflict.innerText()).toContain('Renamed elsewhere');
          expect(puts[1]?.status).toBe(412);
          await conflict.getByRole('button', { name: 'Overwrite' }).click();
          await expect.poll(() => editor.isVisible()).toBe(false);
          expect(puts.map((put) => put.status)).toEqual([412, 412, 200]);
          expect(puts[2]?.headers['if-match']).toBe(newestTag);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).body.data).toEqual({ id: book.id, title: 'Stale edit', author: 'Someone else', year: 2002 });
          await expect.poll(async () => (await rows(page)).find((cells) => cells[0] === String(book.id))).toEqual([String(book.id), 'Stale edit', 'Someone else', '2002']);
          expect(unexpected(problems, [412])).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a stale delete: a 412 shows the book as it is now; Reload keeps it, and it stays until “Delete anyway”',
      async () => {
        const book = await service.client.createBook(token, { title: 'Stale delete', author: 'Keeper', year: 1999 });
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          const deletes = watchRequests(page, 'DELETE', `/book/${book.id}`);
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          const row = table(page).getByRole('row', { name: /Stale delete/ });
          await expect.poll(() => row.count()).toBe(1);
          const confirm = page.getByRole('alertdialog', { name: 'Delete this book?' });
          const conflict = page.getByRole('alertdialog', { name: /changed since you opened it/ });

          await row.getByRole('button', { name: /^Delete/ }).click();
          await expect.poll(() => confirm.isVisible()).toBe(true);
          const openedTag = await etagOf(book.id);
          await service.client.request('PUT', `/book/${book.id}`, { token, body: { year: 1998 } });
          await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
          await expect.poll(() => conflict.isVisible()).toBe(true);
          expect(await conflict.innerText()).toMatch(/Year\s+1998/);
          expect(deletes[0]?.headers['if-match']).toBe(openedTag);
          expect(deletes[0]?.status).toBe(412);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);

          // Reload: nothing deleted, both dialogs closed, the row shows the book as it is now.
          await conflict.getByRole('button', { name: 'Reload' }).click();
          await expect.poll(() => confirm.isVisible()).toBe(false);
          expect(await conflict.isVisible()).toBe(false);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);
          expect((await rows(page)).find((cells) => cells[0] === String(book.id))).toEqual([String(book.id), 'Stale delete', 'Keeper', '1998']);

          // Again, changed again meanwhile: the book stays until "Delete anyway".
          await row.getByRole('button', { name: /^Delete/ }).click();
          await expect.poll(() => confirm.isVisible()).toBe(true);
          expect(await confirm.innerText()).toContain('(1998)');
          await service.client.request('PUT', `/book/${book.id}`, { token, body: { author: 'Changed again' } });
          await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
          await expect.poll(() => conflict.isVisible()).toBe(true);
          expect(await conflict.innerText()).toContain('Changed again');
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).status).toBe(200);
          await conflict.getByRole('button', { name: 'Delete anyway' }).click();
          await expect.poll(() => row.count()).toBe(0);
          expect(await confirm.isVisible()).toBe(false);
          expect(deletes.map((request) => request.status)).toEqual([412, 412, 200]);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).status).toBe(404);
          expect(unexpected(problems, [412])).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'at 360 px every row is a card: id, title, author, year, Edit and Delete all inside the screen, no sideways scrolling; at 1280 px still a table',
      async () => {
        for (const book of [
          { title: 'A'.repeat(120), author: 'Unbroken title', year: -9999 },
          { title: 'A title of many words that goes on for quite a while', author: 'An author with a long name as well, really', year: 2024 },
          { title: 'Short', author: 'S', year: 1 },
        ]) {
          await service.client.createBook(token, book);
        }
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: NARROW });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await expect.poll(() => page.getByText(/^Showing 1–/).isVisible()).toBe(true);
          const bodyRows = table(page).locator('tbody tr');
          expect(await bodyRows.count()).toBeGreaterThanOrEqual(3);
          const inside = async (locator: Locator, what: string) => {
            const box = await locator.boundingBox();
            expect(box, what).not.toBeNull();
            expect(box?.x, what).toBeGreaterThanOrEqual(0);
            expect((box?.x ?? 0) + (box?.width ?? 0), what).toBeLessThanOrEqual(NARROW.width);
          };
          /** Readable, not squeezed into a sliver: a short value stays on one line. */
          const oneLine = async (locator: Locator, what: string) => expect((await locator.boundingBox())?.height, what).toBeLessThan(40);
          for (const row of await bodyRows.all()) {
            const id = await row.locator('td').first().textContent();
            for (const [index, column] of ['id', 'title', 'author', 'year'].entries()) await inside(row.getByRole('cell').nth(index), `${column} of book ${id}`);
            await oneLine(row.getByRole('cell').nth(0), `id of book ${id}`);
            await oneLine(row.getByRole('cell').nth(3), `year of book ${id}`);
            if ((await row.getByRole('cell').nth(1).textContent()) === 'Short') await oneLine(row.getByRole('cell').nth(1), 'the title “Short”');
            await inside(row.getByRole('button', { name: /^Edit/ }), `Edit of book ${id}`);
            await inside(row.getByRole('button', { name: /^Delete/ }), `Delete of book ${id}`);
          }
          expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(NARROW.width);
          // Sorting still works from the header's buttons.
          await table(page).getByRole('button', { name: 'Year' }).click();
          await expect.poll(async () => (await rows(page))[0]?.[3]).toBe('-9999');
          await screenshot(page, 'cards-360');

          await page.setViewportSize(WIDE);
          expect(await page.evaluate<string>("getComputedStyle(document.querySelector('#books-body tr')).display")).toBe('table-row');
          expect(await table(page).getByRole('columnheader', { name: 'Actions' }).isVisible()).toBe(true);
          await screenshot(page, 'cards-1280');
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('issue 31: the list pages on the service (limit, cursor, sort, q), whatever the size of the collection', () => {
    const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
    let token: string;
    const AUTHORS = ['J. R. R. Tolkien', 'Ursula K. Le Guin', 'Frank Herbert', 'Christopher Tolkien', 'Octavia E. Butler'];
    const ADJECTIVES = ['Silent', 'Hollow', 'Iron', 'Winter', 'Glass', 'Ember', 'Northern'];
    const NOUNS = ['River', 'Crown', 'Garden', 'Tower', 'Shadow', 'Harbour', 'Lantern', 'Road', 'Forest', 'Mirror', 'Gate'];
    const COUNT = 260;
    beforeAll(async () => {
      token = await service.client.token();
      // Straight into the store the service has migrated (its search index follows by itself): fast.
      const database = openSqlite(service.current.testStore.url.replace(/^sqlite:/, ''));
      const insert = database.prepare('insert into books (title, author, year) values (?, ?, ?)');
      database.transaction(() => {
        for (let i = 1; i <= COUNT; i++) insert.run(`${ADJECTIVES[i % 7]} ${NOUNS[i % 11]} ${i}`, AUTHORS[i % 5], 1900 + ((i * 37) % 120));
      })();
    });

    type Stored = { id: string; title: string; author: string; year: number };
    /** Every stored book (the API's full list, ids as text), the oracle the pages are checked against. */
    async function everyBook(): Promise<Stored[]> {
      const listed = await service.client.request('GET', '/books', { token });
      return (listed.body.data as Array<Omit<Stored, 'id'> & { id: number }>).map((book) => ({ ...book, id: String(book.id) }));
    }
    /** What the contract says a sort and a search give: binary order of text, ties by id; each term starts a word. */
    function expected(books: Stored[], sort: string, q = ''): string[][] {
      const field = sort.replace(/^-/, '') as keyof Stored;
      const sign = sort.startsWith('-') ? -1 : 1;
      const words = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);
      const terms = words(q);
      const byId = (a: Stored, b: Stored) => a.id.length - b.id.length || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      return books
        .filter((book) => terms.every((term) => words(`${book.title} ${book.author}`).some((word) => word.startsWith(term))))
        .sort((a, b) => {
          const [x, y] = [a[field], b[field]];
          const order = field === 'id' ? 0 : x < y ? -1 : x > y ? 1 : 0;
          return sign * (order || byId(a, b));
        })
        .map((book) => [book.id, book.title, book.author, String(book.year)]);
    }
    /** Every GET /books the page sent, as its query parameters. */
    function watchLists(page: Page): URLSearchParams[] {
      const lists: URLSearchParams[] = [];
      page.on('request', (request) => {
        const url = new URL(request.url());
        if (request.method() === 'GET' && url.pathname === '/books') lists.push(url.searchParams);
      });
      return lists;
    }
    /** Each list answer comes over HTTP from a store on a machine that may be busy: more than the usual second to arrive. */
    const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 5_000 });
    const position = (page: Page) => page.locator('#page-position').innerText();
    const status = (page: Page) => page.locator('#list-status').innerText();

    it(
      'one page per request: the count, Next and Previous by cursor, sorting, the page size; never the whole collection',
      async () => {
        const all = await everyBook();
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        const lists = watchLists(page);
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await poll(() => status(page)).toBe(`Showing 1–50 of ${all.length} books, sorted by id ascending.`);
          const byId = expected(all, 'id');
          expect(await rows(page)).toEqual(byId.slice(0, 50));
          expect(await position(page)).toBe('Page 1 of 6');
          const previous = page.getByRole('button', { name: 'Previous page' });
          const next = page.getByRole('button', { name: 'Next page' });
          expect(await previous.isDisabled()).toBe(true);

          // Next follows the Link header's cursor, page after page, to the last (no Link: Next disabled).
          for (let number = 2; number <= 6; number++) {
            await next.click();
            await poll(() => position(page)).toBe(`Page ${number} of 6`);
            await poll(() => rows(page)).toEqual(byId.slice((number - 1) * 50, number * 50));
          }
          expect(await next.isDisabled()).toBe(true);
          // The count came with the first page and is kept for the later ones.
          expect(await status(page)).toBe(`Showing 251–${all.length} of ${all.length} books, sorted by id ascending.`);
          // Previous: the cursor that led to the page before, from the page's own stack.
          await previous.click();
          await poll(() => position(page)).toBe('Page 5 of 6');
          expect(await rows(page)).toEqual(byId.slice(200, 250));
          const cursors = lists.map((query) => query.get('cursor'));
          expect(cursors[0]).toBeNull();
          expect(new Set(cursors.slice(1, 6)).size).toBe(5);
          expect(cursors.at(-1)).toBe(cursors[4]);

          // Sorting asks for the first page of the new order.
          const yearHeader = table(page).getByRole('columnheader', { name: 'Year' });
          await yearHeader.getByRole('button', { name: 'Year' }).click();
          expect(await yearHeader.getAttribute('aria-sort')).toBe('ascending');
          await poll(() => rows(page)).toEqual(expected(all, 'year').slice(0, 50));
          expect(await position(page)).toBe('Page 1 of 6');
          await yearHeader.getByRole('button', { name: 'Year' }).click();
          await poll(() => rows(page)).toEqual(expected(all, '-year').slice(0, 50));
          await next.click();
          await poll(() => rows(page)).toEqual(expected(all, '-year').slice(50, 100));
          await table(page).getByRole('button', { name: 'Title' }).click();
          await poll(() => rows(page)).toEqual(expected(all, 'title').slice(0, 50));

          // The page size: 20 a page.
          await page.getByLabel('Books per page').selectOption('20');
          await poll(() => position(page)).toBe('Page 1 of 13');
          expect(await rows(page)).toEqual(expected(all, 'title').slice(0, 20));
          await next.click();
          await poll(() => rows(page)).toEqual(expected(all, 'title').slice(20, 40));
          expect(await status(page)).toBe(`Showing 21–40 of ${all.length} books, sorted by title ascending.`);

          // Every list request asked for one page: a limit, the sort, at most one cursor.
          for (const query of lists) {
            expect(['1', '20', '50'], String(query)).toContain(query.get('limit'));
            expect(query.getAll('cursor').length).toBeLessThanOrEqual(1);
          }
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'the filter asks the service as one types: one request after a pause, an older answer never replaces a newer one',
      async () => {
        const all = await everyBook();
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        const lists = watchLists(page);
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await poll(() => rows(page)).toHaveLength(50);
          const filter = page.getByLabel('Filter by title or author');

          // Typed quickly: only the whole word is sent.
          const before = lists.length;
          await filter.pressSequentially('tolkien', { delay: 20 });
          await poll(() => status(page)).toBe(`Showing 1–50 of ${expected(all, 'id', 'tolkien').length} books matching “tolkien”, sorted by id ascending.`);
          // (Fewer requests than keys, the last for the whole word; a busy machine may stall between two keys past the pause.)
          const sentTexts = lists.slice(before).map((query) => query.get('q') ?? '');
          expect(sentTexts.at(-1)).toBe('tolkien');
          expect(sentTexts.length).toBeLessThan('tolkien'.length);
          for (const text of sentTexts) expect('tolkien'.startsWith(text)).toBe(true);
          expect(await rows(page)).toEqual(expected(all, 'id', 'tolkien').slice(0, 50));

          // The answers for the earlier texts are slowed down until after the last one arrived:
          // the table ends with the last text's books, and stays so.
          await filter.fill('');
          await poll(() => rows(page)).toEqual(expected(all, 'id').slice(0, 50));
          const slowDown = async (route: Route) => {
            const q = new URL(route.request().url()).searchParams.get('q');
            if (q !== 'silent river') await new Promise((resolve) => setTimeout(resolve, 800));
            await route.fallback().catch(() => undefined); // called off by the page meanwhile
          };
          await page.route(/\/books\?/, slowDown);
          await filter.pressSequentially('silent river', { delay: 200 });
          await poll(() => rows(page)).toEqual(expected(all, 'id', 'silent river').slice(0, 50));
          expect(lists.map((query) => query.get('q'))).toContain('silent');
          await page.waitForTimeout(1_500);
          expect(await rows(page)).toEqual(expected(all, 'id', 'silent river').slice(0, 50));
          expect(await status(page)).toContain('matching “silent river”');
          await page.unroute(/\/books\?/, slowDown);

          await filter.fill('no such word');
          await poll(() => page.getByText('No book matches “no such word”.').isVisible()).toBe(true);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a link keeps the page, the sort and the filter: opened after signing in it shows the same page; Back and Forward walk the pages',
      async () => {
        const all = await everyBook();
        const want = expected(all, '-year', 'tolkien');
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        let link: string;
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await page.getByLabel('Books per page').selectOption('20');
          await page.getByLabel('Filter by title or author').fill('tolkien');
          await poll(() => status(page)).toContain('matching “tolkien”');
          await table(page).getByRole('button', { name: 'Year' }).click();
          await table(page).getByRole('button', { name: 'Year' }).click();
          await poll(() => rows(page)).toEqual(want.slice(0, 20));
          for (const number of [2, 3]) {
            await page.getByRole('button', { name: 'Next page' }).click();
            await poll(() => position(page)).toBe(`Page ${number} of ${Math.ceil(want.length / 20)}`);
          }
          expect(await rows(page)).toEqual(want.slice(40, 60));
          link = page.url();
          const fragment = new URLSearchParams(new URL(link).hash.slice(1));
          expect([fragment.get('sort'), fragment.get('q'), fragment.get('size'), fragment.get('page'), fragment.getAll('cursor').length]).toEqual(['-year', 'tolkien', '20', '3', 2]);

          // Back: page 2; Back again: page 1; Forward: page 2.
          await page.goBack();
          await poll(() => position(page)).toBe(`Page 2 of ${Math.ceil(want.length / 20)}`);
          expect(await rows(page)).toEqual(want.slice(20, 40));
          await page.goBack();
          await poll(() => rows(page)).toEqual(want.slice(0, 20));
          await page.goForward();
          await poll(() => rows(page)).toEqual(want.slice(20, 40));
          expect(problems).toEqual([]);
        } finally {
          await close();
        }

        // The link in a new tab: sign in, and the same page, sorted and filtered, with its count.
        const other = await openWatched(browser, service.current.baseUrl, { viewport: NARROW });
        try {
          await other.page.goto(link);
          await signIn(other.page);
          await poll(() => rows(other.page)).toEqual(want.slice(40, 60));
          await poll(() => position(other.page)).toBe(`Page 3 of ${Math.ceil(want.length / 20)}`);
          await poll(() => status(other.page)).toBe(`Showing 41–60 of ${want.length} books matching “tolkien”, sorted by year descending.`);
          expect(await other.page.getByLabel('Filter by title or author').inputValue()).toBe('tolkien');
          expect(await other.page.getByLabel('Books per page').inputValue()).toBe('20');
          expect(await table(other.page).getByRole('columnheader', { name: 'Year' }).getAttribute('aria-sort')).toBe('descending');
          await other.page.getByRole('button', { name: 'Previous page' }).click();
          await poll(() => rows(other.page)).toEqual(want.slice(20, 40));
          expect(other.problems).toEqual([]);
        } finally {
          await other.close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a link with a cursor the service did not issue, or issued for another sort: the message, then the first page of that sort and filter',
      async () => {
        const all = await everyBook();
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.goto(`${service.current.baseUrl}/#sort=title&q=tolkien&page=3&cursor=bm90LWEtY3Vyc29y&cursor=Zm9yZ2Vk`);
          await signIn(page);
          const error = page.locator('#list-error');
          await poll(() => error.innerText()).toBe(
            'That page could not be opened (HTTP 400 “Invalid cursor: not issued by this service”); here is the first page instead.',
          );
          await poll(() => rows(page)).toEqual(expected(all, 'title', 'tolkien').slice(0, 50));
          expect(await position(page)).toMatch(/^Page 1 of /);
          expect(new URL(page.url()).hash).toBe('#sort=title&q=tolkien');

          // A real cursor, of the title order, put in a link that sorts by author.
          await page.getByRole('button', { name: 'Next page' }).click();
          await poll(() => position(page)).toMatch(/^Page 2 of /);
          const cursor = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('cursor') ?? '';
          await page.goto(`${service.current.baseUrl}/#${new URLSearchParams({ sort: 'author', q: 'tolkien', page: '2', cursor })}`);
          await poll(() => error.innerText()).toBe(
            'That page could not be opened (HTTP 400 “Invalid cursor: issued for another sort or search”); here is the first page instead.',
          );
          await poll(() => rows(page)).toEqual(expected(all, 'author', 'tolkien').slice(0, 50));
          expect(unexpected(problems, [400])).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'edit and delete from page 2 of a filtered list: the same page is read again, the row shows the change or leaves, the count follows',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: WIDE });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          await signIn(page);
          await page.getByLabel('Filter by title or author').fill('herbert');
          await poll(() => status(page)).toContain('matching “herbert”');
          await page.getByLabel('Books per page').selectOption('20');
          await page.getByRole('button', { name: 'Next page' }).click();
          await poll(() => position(page)).toMatch(/^Page 2 of /);
          const before = expected(await everyBook(), 'id', 'herbert');
          expect(await rows(page)).toEqual(before.slice(20, 40));
          const [first, second, third] = before.slice(20, 23) as [string[], string[], string[]];
          const cursor = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('cursor');

          // A new year: the row shows it, on the same page (the same cursor asked again).
          const lists = watchLists(page);
          await table(page).getByRole('row', { name: new RegExp(`^${first[0]} `) }).getByRole('button', { name: /^Edit/ }).click();
          const editor = page.getByRole('dialog', { name: `Edit book ${first[0]}` });
          await editor.getByLabel('Year').fill('1601');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          await poll(() => editor.isVisible()).toBe(false);
          await poll(async () => (await rows(page))[0]).toEqual([first[0], first[1], first[2], '1601']);
          const reread = lists.filter((query) => query.get('limit') === '20').at(-1);
          expect(reread?.get('cursor')).toBe(cursor);
          expect(reread?.get('q')).toBe('herbert');

          // A new author: the book no longer matches, and leaves the page.
          await table(page).getByRole('row', { name: new RegExp(`^${second[0]} `) }).getByRole('button', { name: /^Edit/ }).click();
          const editor2 = page.getByRole('dialog', { name: `Edit book ${second[0]}` });
          await editor2.getByLabel('Author').fill('Someone Else');
          await editor2.getByRole('button', { name: 'Save changes' }).click();
          await poll(async () => (await rows(page)).map((cells) => cells[0])).not.toContain(second[0]);
          expect((await service.client.request('GET', `/book/${second[0]}`, { token })).body.data).toMatchObject({ author: 'Someone Else' });

          // Delete: gone from the page and the store; the count is read again.
          await table(page).getByRole('row', { name: new RegExp(`^${third[0]} `) }).getByRole('button', { name: /^Delete/ }).click();
          const confirm = page.getByRole('alertdialog', { name: 'Delete this book?' });
          await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
          await poll(async () => (await rows(page)).map((cells) => cells[0])).not.toContain(third[0]);
          expect((await service.client.request('GET', `/book/${third[0]}`, { token })).status).toBe(404);
          const after = expected(await everyBook(), 'id', 'herbert');
          expect(after).toHaveLength(before.length - 2);
          await poll(() => rows(page)).toEqual(after.slice(20, 40));
          await poll(() => status(page)).toContain(`of ${after.length} books matching “herbert”`);
          expect(await position(page)).toMatch(/^Page 2 of /);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('the page stays current: it follows GET /books/changes while signed in', () => {
    const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    /** The acceptance: another client's change shows within a second. */
    const WITHIN_A_SECOND = { timeout: 1_000, interval: 25 };
    const status = (page: Page) => page.locator('#list-status').innerText();
    const feedStatus = (page: Page) => page.locator('#feed-status').innerText();
    /** Each row's title and class (not waiting for any row to exist). */
    const marks = (page: Page) => table(page).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[1]?.textContent, tr.className]));
    const rowOf = (page: Page, title: string) => table(page).getByRole('row', { name: new RegExp(`^\\d+ ${title} `) });

    /** A page signed in at `baseUrl`, once it follows the feed (its stream answered 200). */
    async function following(baseUrl = service.current.baseUrl): Promise<Watched> {
      const watched = await openWatched(browser, baseUrl, { viewport: WIDE });
      const stream = watched.page.waitForResponse((response) => new URL(response.url()).pathname === '/books/changes');
      await watched.page.goto(`${baseUrl}/`);
      await signIn(watched.page);
      expect((await stream).status()).toBe(200);
      return watched;
    }

    /** Page `a` edits book `id`'s `field` through its dialog. */
    async function editOn(a: Page, id: string, title: string, field: string, value: string): Promise<void> {
      await rowOf(a, title).getByRole('button', { name: /^Edit/ }).click();
      const editor = a.getByRole('dialog', { name: `Edit book ${id}` });
      await expect.poll(() => editor.getByLabel('Title').inputValue()).toBe(title);
      await editor.getByLabel(field).fill(value);
      await editor.getByRole('button', { name: 'Save changes' }).click();
      await expect.poll(() => editor.isVisible()).toBe(false);
    }

    /** Page `a` deletes the book through its dialog. */
    async function deleteOn(a: Page, title: string): Promise<void> {
      await rowOf(a, title).getByRole('button', { name: /^Delete/ }).click();
      await a.getByRole('alertdialog').getByRole('button', { name: 'Delete' }).click();
      await expect.poll(() => rowOf(a, title).count()).toBe(0);
    }

    it(
      "two pages: B shows A's add, edit and delete within a second, each marked and said, with the count; A's own writes are not news to A; signing out stops following",
      async () => {
        const kindred = await service.client.createBook(token, { title: 'Kindred', author: 'Octavia E. Butler', year: 1979 });
        const a = await following();
        const b = await following();
        const lists: string[] = [];
        b.page.on('request', (request) => {
          if (new URL(request.url()).pathname === '/books') lists.push(new URL(request.url()).search);
        });
        try {
          await expect.poll(() => rows(b.page)).toEqual([[String(kindred.id), 'Kindred', 'Octavia E. Butler', '1979']]);

          // Add on A: B shows the row, marked, and the new count.
          await addBook(a.page, { title: 'Parable of the Sower', author: 'Octavia E. Butler', year: '1993' });
          await expect.poll(() => a.page.getByText(/^Added “Parable of the Sower”/).isVisible()).toBe(true);
          await expect.poll(() => marks(b.page), WITHIN_A_SECOND).toContainEqual(['Parable of the Sower', 'fresh']);
          const parable = (await rows(b.page)).find((cells) => cells[1] === 'Parable of the Sower')?.[0] ?? '';
          expect(await status(b.page)).toBe(`Book ${parable} “Parable of the Sower” was created elsewhere. Showing 1–2 of 2 books, sorted by id ascending.`);
          expect(await marks(b.page)).toContainEqual(['Kindred', '']);

          // Edit on A: B shows the new year, the row marked.
          await editOn(a.page, String(kindred.id), 'Kindred', 'Year', '1980');
          await expect.poll(() => rows(b.page), WITHIN_A_SECOND).toContainEqual([String(kindred.id), 'Kindred', 'Octavia E. Butler', '1980']);
          expect(await marks(b.page)).toContainEqual(['Kindred', 'fresh']);
          expect(await status(b.page)).toMatch(new RegExp(`^Book ${kindred.id} “Kindred” was updated elsewhere\\. Showing 1–2 of 2 books`));

          // Delete on A: the row leaves B, which says so; the count follows.
          await deleteOn(a.page, 'Parable of the Sower');
          await expect.poll(() => status(b.page), WITHIN_A_SECOND).toBe(
            `Book ${parable} “Parable of the Sower” was deleted elsewhere. Showing 1–1 of 1 book, sorted by id ascending.`,
          );
          expect((await rows(b.page)).map((cells) => cells[1])).toEqual(['Kindred']);

          // A's own writes: A said what it did, never that it happened "elsewhere".
          await a.page.waitForTimeout(500);
          expect(await status(a.page)).toMatch(/^Deleted “Parable of the Sower”\. Showing/);
          expect(await marks(a.page)).toEqual([['Kindred', 'changed']]);
          // B asked for one page per change, never the whole collection.
          expect(lists.length).toBeGreaterThanOrEqual(3);
          expect(lists.filter((search) => !/[?&]limit=50(&|$)/.test(search))).toEqual([]);

          // Sign out: B's stream is closed, and no other is opened.
          const open = service.current.app.changeFeed.openStreams;
          const streams = b.sent.filter((request) => request.path === '/books/changes').length;
          await b.page.getByRole('button', { name: 'Sign out' }).click();
          await expect.poll(() => service.current.app.changeFeed.openStreams).toBe(open - 1);
          await b.page.waitForTimeout(1_500);
          expect(b.sent.filter((request) => request.path === '/books/changes')).toHaveLength(streams);
          await service.client.createBook(token, { title: 'After sign-out', author: 'Nobody', year: 2000 });
          await b.page.waitForTimeout(500);
          expect(await b.page.getByRole('heading', { name: 'Sign in' }).isVisible()).toBe(true);
          expect(a.problems).toEqual([]);
          expect(b.problems).toEqual([]);
        } finally {
          await a.close();
          await b.close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      "B's edit dialog tells of A's change before B saves, with the new values; saving anyway meets the 412 guard; a delete meanwhile is told too",
      async () => {
        const book = await service.client.createBook(token, { title: 'The Dispossessed', author: 'Ursula K. Le Guin', year: 1974 });
        const lathe = await service.client.createBook(token, { title: 'The Lathe of Heaven', author: 'Ursula K. Le Guin', year: 1971 });
        const a = await following();
        const b = await following();
        try {
          await rowOf(b.page, 'The Dispossessed').getByRole('button', { name: /^Edit/ }).click();
          const editor = b.page.getByRole('dialog', { name: `Edit book ${book.id}` });
          const news = editor.locator('#edit-news-text');
          await expect.poll(() => editor.getByLabel('Year').inputValue()).toBe('1974');
          await editor.getByLabel('Title').fill('The Dispossessed: An Ambiguous Utopia');
          expect(await news.isVisible()).toBe(false);

          await editOn(a.page, String(book.id), 'The Dispossessed', 'Year', '1975');
          await expect.poll(async () => (await news.isVisible()) && news.innerText(), WITHIN_A_SECOND).toBe(
            'Someone else changed this book after you opened it: it now reads “The Dispossessed” by Ursula K. Le Guin (1975). Saving your values asks first.',
          );
          // What B typed is still there.
          expect(await editor.getByLabel('Title').inputValue()).toBe('The Dispossessed: An Ambiguous Utopia');

          // Saved anyway: the service refuses it (412), the conflict dialog shows the book as it is.
          const refused = b.page.waitForResponse((response) => response.request().method() === 'PUT');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          expect((await refused).status()).toBe(412);
          const conflict = b.page.getByRole('alertdialog', { name: 'This book changed since you opened it' });
          await expect.poll(() => conflict.isVisible()).toBe(true);
          await b.page.keyboard.press('Escape');
          await expect.poll(() => conflict.isVisible()).toBe(false);

          // "Use the new values": the form holds A's book; saving now goes through.
          await editor.getByRole('button', { name: 'Use the new values' }).click();
          await expect.poll(() => editor.getByLabel('Year').inputValue()).toBe('1975');
          expect(await editor.getByLabel('Title').inputValue()).toBe('The Dispossessed');
          expect(await news.isVisible()).toBe(false);
          await editor.getByLabel('Author').fill('Ursula Le Guin');
          await editor.getByRole('button', { name: 'Save changes' }).click();
          await expect.poll(() => editor.isVisible()).toBe(false);
          expect((await service.client.request('GET', `/book/${book.id}`, { token })).body.data).toEqual({ ...book, author: 'Ursula Le Guin', year: 1975 });

          // A deletes the book B has open: B's dialog says so.
          await rowOf(b.page, 'The Lathe of Heaven').getByRole('button', { name: /^Edit/ }).click();
          const latheEditor = b.page.getByRole('dialog', { name: `Edit book ${lathe.id}` });
          await expect.poll(() => latheEditor.getByLabel('Year').inputValue()).toBe('1971');
          await deleteOn(a.page, 'The Lathe of Heaven');
          const latheNews = latheEditor.locator('#edit-news-text');
          await expect.poll(async () => (await latheNews.isVisible()) && latheNews.innerText(), WITHIN_A_SECOND).toBe(
            'Someone else deleted this book after you opened it: it can no longer be saved.',
          );
          expect(await latheEditor.getByRole('button', { name: 'Use the new values' }).isVisible()).toBe(false);
          expect(a.problems).toEqual([]);
          expect(unexpected(b.problems, [412])).toEqual([]);
        } finally {
          await a.close();
          await b.close();
        }
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'a lost connection shows "reconnecting", then catches up with Last-Event-ID, without a reload',
      async () => {
        // B reaches the service through a TCP proxy the test cuts (every connection reset, the
        // port closed) and restores: a real lost connection, not one the page is told about.
        const proxy = await startTcpProxy(Number(new URL(service.current.baseUrl).port));
        const viaProxy = `http://127.0.0.1:${proxy.port}`;
        const kept = await service.client.createBook(token, { title: 'Before the cut', author: 'Someone', year: 1990 });
        const b = await following(viaProxy);
        const streams: Array<{ search: string; lastEventId: string | undefined }> = [];
        b.page.on('request', (request) => {
          const url = new URL(request.url());
          if (url.pathname === '/books/changes') streams.push({ search: url.search, lastEventId: request.headers()['last-event-id'] });
        });
        try {
          await expect.poll(() => rows(b.page)).toContainEqual([String(kept.id), 'Before the cut', 'Someone', '1990']);
          expect(await feedStatus(b.page)).toBe('');
          await proxy.cut();
          await expect.poll(() => feedStatus(b.page), { timeout: 2_000 }).toBe('Connection to the service lost: reconnecting…');

          // Changes while B is cut off (another client: the API).
          const made = await service.client.createBook(token, { title: 'Written while cut off', author: 'Elsewhere', year: 2001 });
          await service.client.request('PUT', `/book/${kept.id}`, { token, body: { year: 1991 } });
          await b.page.waitForTimeout(1_500);
          expect(streams.length).toBeGreaterThanOrEqual(1); // B tried again, and could not reach the service
          expect((await rows(b.page)).map((cells) => cells[1])).not.toContain('Written while cut off');
          expect(await feedStatus(b.page)).toBe('Connection to the service lost: reconnecting…');

          await proxy.restore();
          await expect.poll(() => rows(b.page), { timeout: 3_000 }).toContainEqual([String(made.id), 'Written while cut off', 'Elsewhere', '2001']);
          expect(await rows(b.page)).toContainEqual([String(kept.id), 'Before the cut', 'Someone', '1991']);
          expect(await marks(b.page)).toContainEqual(['Written while cut off', 'fresh']);
          await expect.poll(() => feedStatus(b.page)).toBe('');
          // Resumed from the last event id it had, not from "now" and not from a new list.
          for (const stream of streams) expect(stream).toEqual({ search: '', lastEventId: expect.stringMatching(/^[\w-]+$/) });
          // Chromium logs each refused reconnection.
          expect(b.problems.filter((problem) => !/net::ERR_(CONNECTION_REFUSED|CONNECTION_RESET|EMPTY_RESPONSE)/.test(problem))).toEqual([]);
        } finally {
          await b.close();
          await proxy.close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });

  describe('the failed-login limit', () => {
    const service = useService('sqlite', { LOGIN_RATE_LIMIT: '2' });

    it(
      'a wrong password is said in words; past the limit the 429 is shown with the wait from Retry-After',
      async () => {
        const { page, problems, close } = await openWatched(browser, service.current.baseUrl, { viewport: NARROW });
        try {
          await page.goto(`${service.current.baseUrl}/`);
          const error = page.getByRole('region', { name: 'Sign in' }).getByRole('alert');
          const attempt = async (password: string) => {
            const answered = page.waitForResponse((response) => new URL(response.url()).pathname === '/token');
            await signIn(page, password);
            return answered;
          };
          expect((await attempt('wrong')).status()).toBe(401);
          await expect.poll(() => error.innerText()).toBe('Wrong username or password (the service answered “Invalid credentials”).');
          expect((await attempt('wrong')).status()).toBe(401);
          // Past the limit even the right password is refused, for the rest of the minute.
          const answer = await attempt(TEST_PASSWORD);
          expect(answer.status()).toBe(429);
          const wait = Number(answer.headers()['retry-after']);
          expect(wait).toBeGreaterThan(0);
          await expect.poll(() => error.innerText()).toBe(`Too many failed sign-ins from this address. Wait ${wait} seconds, then try again.`);
          await screenshot(page, 'too-many-360');
          expect(unexpected(problems, [401, 429])).toEqual([]);
        } finally {
          await close();
        }
      },
      TEST_TIMEOUT_MS,
    );
  });
});
