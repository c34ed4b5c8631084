// GET /docs (docs/operations.md "Health, metrics and the API document": interactive API reference, Swagger UI served from the
// package, no CDN), end to end in a real headless Chromium driven by playwright-core: the page
// carries the service's own title and logo, shows the six operations and performs a real
// POST /token, and loads nothing from elsewhere.
// Chromium: test/helpers/infra/chromium.ts.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DOCS_LOGO_SVG, DOCS_TITLE } from '../../src/plugins/external/api-reference.js';
import { launchChromium } from '../helpers/infra/chromium.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';
import { describeIf } from '../helpers/requirements.js';

/** A name that is not localhost, resolved by Chromium itself to 127.0.0.1 (no DNS, no /etc/hosts). */
const PRIVATE_HOST = 'books.internal.example';
const API_OPERATIONS = ['POST /token', 'POST /book', 'GET /books', 'GET /book/{id}', 'PUT /book/{id}', 'DELETE /book/{id}'];
const BROWSER_TEST_TIMEOUT_MS = 90_000;

interface PageWatch {
  /** Every URL the page requested. */
  requests: string[];
  /** Requests to another origin than the one the page was opened on (aborted, never sent). */
  foreign: string[];
  /** Responses that failed below HTTP, or answered 4xx/5xx. */
  failures: string[];
  pageErrors: string[];
  /** Errors the page logged, among them every Content-Security-Policy violation. */
  consoleErrors: string[];
}

/**
 * Opens `url` in a fresh context where every request to another origin is recorded and aborted,
 * so the test never reaches the internet whatever the page tries. data: URLs are inline content.
 */
async function openWatched(browser: Browser, url: string): Promise<{ page: Page; watch: PageWatch; close(): Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const origin = new URL(url).origin;
  const watch: PageWatch = { requests: [], foreign: [], failures: [], pageErrors: [], consoleErrors: [] };
  await page.route('**/*', async (route) => {
    const requested = route.request().url();
    if (requested.startsWith('data:') || new URL(requested).origin === origin) return route.continue();
    watch.foreign.push(requested);
    return route.abort('blockedbyclient');
  });
  page.on('request', (request) => watch.requests.push(request.url()));
  page.on('requestfailed', (request) => watch.failures.push(`${request.url()}: ${request.failure()?.errorText ?? 'failed'}`));
  page.on('response', (response) => {
    if (response.status() >= 400) watch.failures.push(`${response.url()}: HTTP ${response.status()}`);
  });
  page.on('pageerror', (error) => watch.pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') watch.consoleErrors.push(message.text());
  });
  return { page, watch, close: () => context.close() };
}

/** `METHOD /path` of every operation block Swagger UI rendered. */
async function renderedOperations(page: Page): Promise<string[]> {
  await page.locator('.opblock').first().waitFor({ timeout: 20_000 });
  return page.locator('.opblock-summary').evaluateAll((summaries) =>
    summaries.map((summary) => {
      const method = summary.querySelector('.opblock-summary-method')?.textContent?.trim() ?? '?';
      const pathElement = summary.querySelector('.opblock-summary-path');
      const path = pathElement?.getAttribute('data-path') ?? pathElement?.textContent?.trim() ?? '?';
      return `${method} ${path}`;
    }),
  );
}

// Requirement: it drives a real browser; skipped (reason printed) only outside CI where Chromium is missing.
describeIf('chromium')('GET /docs in headless Chromium', () => {
  const service = useService('sqlite', { LOGIN_RATE_LIMIT: '0' });
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium([`--host-resolver-rules=MAP ${PRIVATE_HOST} 127.0.0.1`]);
  });
  afterAll(async () => {
    await browser?.close();
  });

  it(
    "carries the service's title (tab and top bar) and its own logo, not the plugin's",
    async () => {
      const { page, watch, close } = await openWatched(browser, `${service.current.baseUrl}/docs`);
      try {
        const navigation = await page.goto(`${service.current.baseUrl}/docs`, { waitUntil: 'load' });
        expect(navigation?.status()).toBe(200);
        expect(await page.title()).toBe(DOCS_TITLE);
        await renderedOperations(page);
        // The document's own title heads the page.
        await expect.poll(() => page.locator('.info .title').first().innerText(), { timeout: 10_000 }).toContain('Book collection service');
        // The top bar shows one image: ours, inline (allowed by the page's img-src data:).
        const logo = page.locator('#swagger-ui .topbar .topbar-wrapper > a.link img');
        await logo.waitFor({ timeout: 10_000 });
        expect(await page.locator('#swagger-ui .topbar .topbar-wrapper > a.link').locator('img, svg').count()).toBe(1);
        const source = await logo.getAttribute('src');
        expect(source).toBe(`data:image/svg+xml;base64,${Buffer.from(DOCS_LOGO_SVG).toString('base64')}`);
        // Decoded and drawn: a blocked or broken image has no natural width.
        expect(await logo.evaluate((image) => ('naturalWidth' in image ? Number(image.naturalWidth) : 0))).toBeGreaterThan(0);
        // The tab icon is ours too.
        const icons = await page.locator('link[rel="icon"]').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
        expect(icons.length).toBeGreaterThan(0);
        for (const icon of icons) expect(icon).toMatch(/\/theme\/favicon\.svg$/);
        expect(watch.foreign).toEqual([]);
        expect(watch.failures).toEqual([]);
        expect(watch.pageErrors).toEqual([]);
        expect(watch.consoleErrors, 'console errors (a blocked inline image would be a CSP violation)').toEqual([]);
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'shows the six operations and performs POST /token through "Try it out" → 200 "Token generated successfully"',
    async () => {
      const { page, watch, close } = await openWatched(browser, `${service.current.baseUrl}/docs`);
      try {
        const navigation = await page.goto(`${service.current.baseUrl}/docs`, { waitUntil: 'load' });
        expect(navigation?.status()).toBe(200);

        const operations = await renderedOperations(page);
        for (const operation of API_OPERATIONS) expect(operations, operation).toContain(operation);

        const tokenBlock = page.locator('.opblock-post').filter({ has: page.locator('.opblock-summary-path[data-path="/token"]') });
        await expect.poll(() => tokenBlock.count()).toBe(1);
        await tokenBlock.locator('.opblock-summary-control').click();
        // tryItOutEnabled may already have opened the editor ("Cancel" instead of "Try it out").
        const tryItOut = tokenBlock.getByRole('button', { name: 'Try it out' });
        if (await tryItOut.isVisible()) await tryItOut.click();
        const editor = tokenBlock.locator('textarea.body-param__text');
        await editor.waitFor({ state: 'visible', timeout: 10_000 });
        await editor.fill(JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }));

        const answered = page.waitForResponse(
          (response) => new URL(response.url()).pathname === '/token' && response.request().method() === 'POST',
        );
        await tokenBlock.getByRole('button', { name: 'Execute' }).click();
        const response = await answered;
        expect(response.status()).toBe(200);
        expect(response.request().postDataJSON()).toEqual({ username: TEST_USERNAME, password: TEST_PASSWORD });

        const live = tokenBlock.locator('.live-responses-table');
        await live.waitFor({ state: 'visible', timeout: 10_000 });
        await expect.poll(() => live.locator('tbody tr.response .response-col_status').first().innerText(), { timeout: 10_000 }).toContain('200');
        await expect.poll(() => live.innerText(), { timeout: 10_000 }).toContain('Token generated successfully');

        expect(watch.requests.some((url) => url.endsWith('/docs/json') || url.endsWith('/openapi.json'))).toBe(true);
        expect(watch.foreign, 'requests outside localhost').toEqual([]);
        for (const url of watch.requests) expect(['127.0.0.1', 'localhost', '[::1]'], url).toContain(new URL(url).hostname);
        expect(watch.failures).toEqual([]);
        expect(watch.pageErrors).toEqual([]);
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'works over plain HTTP under a host name that is not localhost (http://<host>:<port>/docs on a private network)',
    async () => {
      // The service speaks plain HTTP on 0.0.0.0:8080; colleagues open /docs by the machine's
      // name. Nothing may be loaded from elsewhere, and nothing may be rewritten to https://.
      const url = `http://${PRIVATE_HOST}:${new URL(service.current.baseUrl).port}/docs`;
      const { page, watch, close } = await openWatched(browser, url);
      try {
        const navigation = await page.goto(url, { waitUntil: 'load' });
        expect(navigation?.status()).toBe(200);
        // Wait for the UI to render, or give up after a while and report what failed.
        await page
          .locator('.opblock')
          .first()
          .waitFor({ timeout: 8_000 })
          .catch(() => undefined);
        expect(watch.foreign, 'requests to another origin than the page (another host, or http:// rewritten to https://)').toEqual([]);
        expect(watch.failures).toEqual([]);
        const operations = await renderedOperations(page);
        for (const operation of API_OPERATIONS) expect(operations, operation).toContain(operation);
      } finally {
        await close();
      }
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
