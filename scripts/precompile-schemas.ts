// The build's last step (scripts/build.mjs runs it with tsx): builds the app once with
// compilers that keep the code of every validator and serializer they make, and writes that
// code to dist/compiled-schemas.cjs, which the built service loads instead of compiling
// (src/schemas/precompiled.ts). The app is built with its default settings over an in-memory
// SQLite store, so every route that exists by default is there; a route only other settings
// add is compiled at startup as before. Written only when it changed.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { COMPILED_SCHEMAS_FILE, compiledSchemasModule, recordingCompilers, type GeneratedCode } from '../src/schemas/precompiled.js';
import { openStore } from '../src/store/open-store.js';

const target = fileURLToPath(new URL(`../dist/${COMPILED_SCHEMAS_FILE}`, import.meta.url));
const config = loadConfig({ SECRET_TOKEN: 'build-time-secret-of-no-use-at-all-32b', DB_URL: 'sqlite::memory:', LOG_LEVEL: 'silent' }, process.cwd());
const logger = pino({ level: 'silent' });
const store = await openStore(config.store, logger);
const code: GeneratedCode = { validators: new Map(), serializers: new Map() };
const app = await buildApp({ config, store, logger, schemaCompilers: recordingCompilers(code) });
await app.ready();
await app.close();
await store.close();

const content = compiledSchemasModule(code);
if (!existsSync(target) || readFileSync(target, 'utf8') !== content) {
  writeFileSync(target, content);
  console.log(`build: dist/${COMPILED_SCHEMAS_FILE} (${code.validators.size} validators, ${code.serializers.size} serializers)`);
}
