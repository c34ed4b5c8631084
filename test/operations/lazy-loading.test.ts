// What a process loads only when a request first needs it (docs/operations.md "Processes and
// memory"): the OpenAPI document and the /docs page are made by @fastify/swagger and
// @fastify/swagger-ui (src/fast/lazy-api-reference.ts) the first time either is asked for. A
// process serving only the API never loads them, nor their YAML library and static-file server.
// Every module the process loads is recorded (test/helpers/service/loaded-modules.ts). Schema
// compilers are not loaded either: every validator and serializer comes from the build
// (src/fast/precompiled-schemas.ts). Each is a speed path; the plain service loads both at startup.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { freePort } from '../helpers/infra/free-port.js';
import { loadedModules, loadedModulesEnv } from '../helpers/service/loaded-modules.js';
import { spawnMain, waitUntilAnswering } from '../helpers/service/main-process.js';
import { fastPaths } from '../helpers/node-http.js';

const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const REFERENCE_PACKAGES = ['@fastify/swagger/', '@fastify/swagger-ui/', '@fastify/static/', 'yaml/'];
/** What compiles a schema (the build made every function: dist/compiled-schemas.cjs) or injects a request. */
const COMPILER_PACKAGES = ['@fastify/ajv-compiler/', '@fastify/fast-json-stringify-compiler/', 'ajv/dist/ajv.js', 'fast-json-stringify/index.js', 'light-my-request/'];
const dir = mkdtempSync(join(tmpdir(), 'lazy-loading-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the service, makes `requests`, stops it; the packages (node_modules/…) it loaded. */
async function packagesLoadedServing(paths: string[], name: string): Promise<string[]> {
  const port = await freePort();
  const loadedFile = join(dir, `${name}.txt`);
  const service = spawnMain(
    {
      SECRET_TOKEN: 'lazy-loading-test-secret-0123456789abcdef',
      DB_URL: `sqlite:${join(dir, `${name}.db`)}`,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      ...loadedModulesEnv(loadedFile),
    },
    dir,
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await waitUntilAnswering(baseUrl, service);
    const token = await fetch(`${baseUrl}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: TEST_USERNAME, password: TEST_PASSWORD }),
    });
    expect(token.status).toBe(200);
    const { data } = (await token.json()) as { data: { token: string } };
    const headers = { authorization: `Bearer ${data.token}` };
    for (const path of paths) expect((await fetch(`${baseUrl}${path}`, { headers })).status, path).toBe(200);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
  }
  return loadedModules(loadedFile)
    .filter((file) => file.includes('/node_modules/'))
    .map((file) => file.slice(file.lastIndexOf('/node_modules/') + '/node_modules'.length));
}

/** Which of `names` (a package's folder, or one of its files) are among the `loaded` files. */
function among(loaded: string[], names: string[]): string[] {
  return names.filter((name) => loaded.some((file) => file.startsWith(`/${name}`)));
}

describe('loaded on first use', () => {
  let apiOnly: Promise<string[]> | undefined;
  /** What a process that serves the API, its health and its metrics loaded (one process for the tests below). */
  async function servingApiOnly(): Promise<string[]> {
    const loaded = await (apiOnly ??= packagesLoadedServing(['/healthz', '/readyz', '/metrics', '/books'], 'api-only'));
    expect(loaded.length).toBeGreaterThan(0); // the recorder works: better-sqlite3, pino, …
    return loaded;
  }

  // Tests the speed path lazy-api-reference: skipped when FAST_PATHS turns it off (the plugins are then registered at startup).
  it.runIf(fastPaths.has('lazy-api-reference'))('a process that serves the API, its health and its metrics never loads the API reference’s packages', async () => {
    expect(among(await servingApiOnly(), REFERENCE_PACKAGES)).toEqual([]);
  });

  // Tests the speed path precompiled-schemas: skipped when FAST_PATHS turns it off (Fastify then compiles at startup).
  it.runIf(fastPaths.has('precompiled-schemas'))('nor a schema compiler: every validator and serializer comes from the build', async () => {
    expect(among(await servingApiOnly(), COMPILER_PACKAGES)).toEqual([]);
  });

  // Tests the speed path lazy-api-reference: skipped when FAST_PATHS turns it off.
  it.runIf(fastPaths.has('lazy-api-reference'))('the first GET /openapi.json or /docs loads them, and the answers are the reference’s', async () => {
    const loaded = await packagesLoadedServing(['/openapi.json', '/docs', '/docs/static/swagger-ui.css'], 'reference');
    expect(among(loaded, REFERENCE_PACKAGES)).toEqual(REFERENCE_PACKAGES);
  });

  it('the bundle holds no copy of them: they are required from node_modules when first needed', () => {
    // Each file's source map lists the files bundled into it: `../node_modules/<package>/<file>`.
    const bundled = readdirSync(DIST)
      .filter((name) => name.endsWith('.js.map'))
      .flatMap((name) => (JSON.parse(readFileSync(join(DIST, name), 'utf8')) as { sources: string[] }).sources)
      .flatMap((source) => /(?:^|\/)node_modules(\/.+)$/.exec(source)?.[1] ?? []);
    expect(bundled.length).toBeGreaterThan(0);
    expect(among(bundled, [...REFERENCE_PACKAGES, ...COMPILER_PACKAGES])).toEqual([]);
  });
});
