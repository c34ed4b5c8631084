// The web page (README "Web page"): GET / and its files under /ui/, served by the service
// itself, with a Content-Security-Policy of its own that allows the service's own files and
// nothing else. WEB_UI=false: none of it is registered.
//
// The API is the same whether the page is on or off. The page is an answer to browsers only:
// GET / from a client that does not ask for HTML (`Accept` without text/html: API clients,
// curl, fetch) is answered exactly like any unknown path, 404 "Route not found". Registered
// after the 405 answers (src/app.ts), so other methods on / and /ui/… stay 404 as well, and
// hidden from the OpenAPI document.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { sep } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';

export const WEB_UI_PREFIX = '/ui/';

/**
 * The page's own policy, replacing the API's `default-src 'none'` on the page's answers: its
 * script, style sheet and icon from this origin, calls to this origin only, no inline script or
 * style, no eval, no plugins, no framing, no form posted anywhere, and Trusted Types so no
 * string can ever be parsed as HTML by the page's code.
 */
export const WEB_UI_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

function asset(type: string, body: Buffer): Asset {
  return { type, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/** The page itself, in the built page's directory; served at / only. */
const PAGE_FILE = 'web/index.html';

/**
 * The built page (`npm run build`: web/ → dist/ui/, keeping the repository's layout, see
 * web/tsconfig.json): dist/ui/ beside the bundle when running from dist/ (this code is then in
 * dist/main.js), or the project's dist/ui/ when running from the sources (tests, `npm run dev`).
 */
function builtPageDirectory(): URL | undefined {
  const candidates = [new URL('./ui/', import.meta.url), new URL('../../dist/ui/', import.meta.url)];
  return candidates.find((directory) => existsSync(new URL(PAGE_FILE, directory)));
}

/** What is served under /ui/, by extension: the page's modules, style sheet and icon. */
const ASSET_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

/**
 * Every file the page may load, by its path under /ui/, which is its path in the built page's
 * directory (/ui/web/src/app.js is dist/ui/web/src/app.js); nothing else is served from there.
 */
function loadAssets(directory: URL): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const found of readdirSync(directory, { recursive: true, encoding: 'utf8' })) {
    const path = found.split(sep).join('/');
    const type = ASSET_TYPES[/^(?:[a-z0-9-]+\/)*[a-z0-9-]+\.([a-z]+)$/.exec(path)?.[1] ?? ''];
    if (type) assets.set(path, asset(type, readFileSync(new URL(path, directory))));
  }
  return assets;
}

/** A browser asking for a page: its Accept names text/html (API clients send none, JSON, or any type). */
function wantsHtml(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && /(^|,)\s*text\/html\s*(;|,|$)/i.test(accept);
}

function send(request: FastifyRequest, reply: FastifyReply, file: Asset) {
  reply
    .header('content-type', file.type)
    .header('cache-control', 'no-cache') // revalidated each time: a new build is picked up at once
    .header('etag', file.etag)
    .header('referrer-policy', 'no-referrer')
    .header('cross-origin-opener-policy', 'same-origin')
    .header('cross-origin-resource-policy', 'same-origin');
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  return reply.code(200).send(file.body);
}

async function webUi(app: FastifyInstance) {
  const directory = builtPageDirectory();
  if (!directory) {
    app.log.warn(`WEB_UI is on but the page is not built (dist/ui/${PAGE_FILE} is missing): run \`npm run build\`; / stays 404`);
    return;
  }
  const assets = loadAssets(directory);
  const page = asset('text/html; charset=utf-8', readFileSync(new URL(PAGE_FILE, directory)));

  app.get('/', { schema: { hide: true } }, async (request, reply) => {
    reply.header('vary', 'accept');
    if (!wantsHtml(request)) return reply.callNotFound();
    reply.header('content-security-policy', WEB_UI_CSP).header('x-frame-options', 'DENY');
    return send(request, reply, page);
  });

  // One route per file, no wildcard: any other path under /ui/ is an unknown path like any other.
  for (const [name, file] of assets) {
    app.get(`${WEB_UI_PREFIX}${name}`, { schema: { hide: true } }, async (request, reply) => send(request, reply, file));
  }
}

export default fp(webUi, { name: 'web-ui' });
