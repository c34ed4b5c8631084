// The build's last step (scripts/build.mjs runs it with tsx): builds the app once with
// compilers that keep the code of every validator and serializer they make, and writes that
// code to dist/compiled-schemas.cjs, which the built service loads instead of compiling when
// the speed path precompiled-schemas is on (src/fast/precompiled-schemas.ts). Always written,
// whatever FAST_PATHS the build runs under: the app is built with fixed settings (its defaults,
// over an in-memory SQLite store, the plain service but for these compilers), so every route
// that exists by default is there; a route only other settings add is compiled at startup as
// before. Written only when it changed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { COMPILED_SCHEMAS_FILE, compiledSchemasModule, recordingCompilers, type GeneratedCode } from '../src/fast/precompiled-schemas.js';
import { openStore } from '../src/store/open-store.js';

const target = fileURLToPath(new URL(`../dist/${COMPILED_SCHEMAS_FILE}`, import.meta.url));
const config = loadConfig({ SECRET_TOKEN: 'build-time-secret-of-no-use-at-all-32b', DB_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }, process.cwd());
const logger = pino({ level: 'silent' });
const store = await openStore(config.store, logger);
const code: GeneratedCode = { validators: new Map(), serializers: new Map() };
const app = await buildApp({ config, store, logger, fastPaths: { schemaCompilers: () => recordingCompilers(code) } });
await app.ready();
await app.close();
await store.close();

const content = compiledSchemasModule(code);
if (!existsSync(target) || readFileSync(target, 'utf8') !== content) {
  writeFileSync(target, content);
  console.log(`build: dist/${COMPILED_SCHEMAS_FILE} (${code.validators.size} validators, ${code.serializers.size} serializers)`);
}
