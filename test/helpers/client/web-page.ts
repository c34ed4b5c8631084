// The web page in Chromium, as its tests drive it (test/web/): a fresh browser context whose
// every problem is recorded, signing in through the page's form, and screenshots kept in
// test-artifacts/web-ui/.
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { TEST_PASSWORD, TEST_USERNAME } from './test-account.js';

export const WIDE = { width: 1280, height: 900 };
export const NARROW = { width: 360, height: 800 };
const ARTIFACTS = new URL('../../../test-artifacts/web-ui/', import.meta.url);

export interface Watched {
  page: Page;
  context: BrowserContext;
  /** Console errors, page errors, CSP violations, requests to other origins, dialogs (alert). */
  problems: string[];
  /** Every request the page sent: method, path and body. */
  sent: Array<{ method: string; path: string; body: string | null }>;
  close(): Promise<void>;
}

export interface WatchOptions {
  viewport?: { width: number; height: number };
  /** Let the page download files (its exports). */
  acceptDownloads?: boolean;
  /** Before the page is used: more routes or listeners on its context. */
  setup?: (context: BrowserContext) => Promise<void>;
}

/**
 * A fresh context, every problem recorded: console errors (Chromium logs each CSP violation
 * there too), uncaught page errors, `securitypolicyviolation` events, requests to another origin
 * (aborted; the page's own `blob:` downloads are its origin's), and any alert or confirm (the
 * page must use none).
 */
export async function openWatched(browser: Browser, baseUrl: string, { viewport = WIDE, acceptDownloads = false, setup }: WatchOptions = {}): Promise<Watched> {
  const context = await browser.newContext({ viewport, acceptDownloads });
  const page = await context.newPage();
  const origin = new URL(baseUrl).origin;
  const problems: string[] = [];
  const sent: Watched['sent'] = [];
  // Run in the page (a string: this file is compiled for Node, without the DOM's types).
  await context.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      console.error('securitypolicyviolation: ' + event.violatedDirective + ' ' + event.blockedURI + ' ' + event.sample);
    });`,
  });
  // A test's own routes, added later, are asked first; fallback() hands a request on to them or on its way.
  await page.route('**/*', async (route) => {
    const requested = route.request().url();
    if (new URL(requested).origin === origin || requested.startsWith('blob:')) return route.fallback();
    problems.push(`request to another origin: ${requested}`);
    return route.abort('blockedbyclient');
  });
  page.on('request', (request) => sent.push({ method: request.method(), path: new URL(request.url()).pathname, body: request.postData() }));
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`);
  });
  page.on('dialog', (dialog) => {
    problems.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  if (setup) await setup(context);
  return { page, context, problems, sent, close: () => context.close() };
}

/** Signs in through the page's form with the test account (or another password). */
export async function signIn(page: Page, password = TEST_PASSWORD): Promise<void> {
  const form = page.getByRole('region', { name: 'Sign in' });
  await form.getByLabel('Username').fill(TEST_USERNAME);
  await form.getByLabel('Password').fill(password);
  await form.getByRole('button', { name: 'Sign in' }).click();
}

/** test-artifacts/web-ui/<name>.png: the whole page, or what the viewport shows. */
export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage });
}
