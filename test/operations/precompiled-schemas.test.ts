// The build generates every route's validator and serializer (scripts/precompile-schemas.ts →
// dist/compiled-schemas.cjs, src/fast/precompiled-schemas.ts), so the built service compiles
// none at startup, and a schema changed since the build is compiled as before, never served
// stale. The suites that start dist/main.js run every built service on these functions, so the
// contract checks prove them; in process, from the sources, Fastify compiles them.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { compiledSchemasModule, precompiledCompilers, recordingCompilers, type GeneratedCode, type PrecompiledCompilers } from '../../src/fast/precompiled-schemas.js';
import { openStore } from '../../src/store/open-store.js';
import { fastPaths, loadFastPathsFor } from '../helpers/node-http.js';

/** The build's file, beside the bundle (the global setup builds it). */
const BUILT_FILE = fileURLToPath(new URL('../../dist/compiled-schemas.cjs', import.meta.url));

// Inside the project, as dist/ is: the generated code requires fast-json-stringify's runtime.
mkdirSync('test-artifacts', { recursive: true });
const dir = mkdtempSync(join('test-artifacts', 'precompiled-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A one-route app whose body must have `n` of `type`; answers `{ n }` through a response schema. */
async function oneRoute(type: 'integer' | 'string', schemaCompilers: PrecompiledCompilers) {
  const app = Fastify({ schemaController: { compilersFactory: schemaCompilers } });
  const properties = { n: { type } };
  app.post('/n', { schema: { body: { type: 'object', required: ['n'], properties }, response: { 200: { type: 'object', properties } } } }, async (request) => request.body);
  await app.ready();
  return app;
}

// Tests of the speed path itself: skipped when FAST_PATHS turns precompiled-schemas off.
describe.skipIf(!fastPaths.has('precompiled-schemas'))('precompiled validators and serializers', () => {
  it('the service with its default settings finds every route part in the build’s file: nothing is compiled at startup', async () => {
    const compilers = precompiledCompilers(BUILT_FILE);
    expect(compilers, 'dist/compiled-schemas.cjs (the global setup builds it)').toBeDefined();
    const config = loadConfig({ SECRET_TOKEN: 'x'.repeat(40), DB_URL: 'sqlite::memory:' }, dir);
    const logger = pino({ level: 'silent' });
    const store = await openStore(config.store, logger);
    // The other paths as the tests run them; the schemas from the build's file.
    const others = await loadFastPathsFor(fastPaths);
    const app = await buildApp({ config, store, logger, fastPaths: { ...others, schemaCompilers: () => compilers } });
    await app.ready();
    await app.close();
    await store.close();
    expect(compilers!.compiledAtStartup).toEqual([]);
  });

  it('from the sources (npm run dev, the tests in process) there is no file beside the code: Fastify compiles at startup', () => {
    expect(precompiledCompilers()).toBeUndefined();
  });

  it('a function is taken from the file only for the schema it was generated from', async () => {
    const code: GeneratedCode = { validators: new Map(), serializers: new Map() };
    await (await oneRoute('integer', recordingCompilers(code))).close();
    const file = resolve(dir, 'compiled-schemas.cjs');
    writeFileSync(file, compiledSchemasModule(code));

    const same = precompiledCompilers(file)!;
    const fromFile = await oneRoute('integer', same);
    expect(same.compiledAtStartup).toEqual([]);
    expect((await fromFile.inject({ method: 'POST', url: '/n', payload: { n: 'one' } })).statusCode).toBe(400);
    expect((await fromFile.inject({ method: 'POST', url: '/n', payload: { n: 7 } })).body).toBe('{"n":7}');
    await fromFile.close();

    // The same route with another schema: compiled at startup, so a string is now valid.
    const changed = precompiledCompilers(file)!;
    const compiled = await oneRoute('string', changed);
    expect(changed.compiledAtStartup).toHaveLength(2);
    expect((await compiled.inject({ method: 'POST', url: '/n', payload: { n: 'one' } })).body).toBe('{"n":"one"}');
    await compiled.close();
  });
});
