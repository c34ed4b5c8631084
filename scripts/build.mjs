#!/usr/bin/env node
// The service's build (package.json "build", "prestart", the tests' global setup): src/main.ts
// bundled by esbuild into dist/main.js, with one more file per store module (loaded only when
// DB_URL picks that store) and the chunks they share; then the routes' validators and
// serializers generated into dist/compiled-schemas.cjs (scripts/precompile-schemas.ts). One file instead of about 900 modules
// is what makes the service start fast and small: Node resolves, reads and compiles one file,
// and V8 keeps one script (docs/benchmarks-changes.md, "Footprint: one bundle, and the heap sized").
// Type checking is `npm run typecheck` (tsc), not part of this step.
//
// Left out of the bundle, loaded from node_modules as they are: native addons, what loads
// files from its own package directory at run time (pino's transports, the API reference
// page's static files), pg's optional native binding, and what only a rare path requires
// (schema compilers, light-my-request): bundled, their code would be parsed at every start.
//
// OpenTelemetry is in the bundle, but only in the chunk src/tracing/start-tracing.ts loads when the
// OTEL_* variables turn tracing on; main.js and the chunks it loads at startup must hold none
// of it (test/operations/tracing-off.test.ts checks the files a startup loads). prom-client
// reads @opentelemetry/api for exemplars, which the service never turns on: it gets a stand-in.
//
// A file is written only when it changed, and dist/'s other .js files from an earlier build
// are removed: an up-to-date build stays untouched (the npm start test checks it).
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');

const EXTERNAL = [
  'better-sqlite3', // native addon
  'pg-native', // pg's optional native binding (not installed)
  'pino', // its transports run files of its own package in worker threads
  'pino-pretty',
  '@fastify/swagger', // reads its own files (__dirname)
  '@fastify/swagger-ui', // serves the files of its own package
  // Needed only to compile a schema (the build; dist/compiled-schemas.cjs has the rest) or to
  // inject a request (the /docs pages): required from node_modules on first use, never parsed at startup.
  '@fastify/ajv-compiler',
  '@fastify/fast-json-stringify-compiler',
  'light-my-request',
];

/** prom-client's one use of @opentelemetry/api: the active span, for exemplars (off: never asked). */
const promClientWithoutOpenTelemetry = {
  name: 'prom-client-without-opentelemetry',
  setup(build) {
    build.onResolve({ filter: /^@opentelemetry\/api$/ }, (args) =>
      /[\\/]node_modules[\\/]prom-client[\\/]/.test(args.importer) ? { path: 'no-exemplars', namespace: 'stand-in' } : undefined,
    );
    build.onLoad({ filter: /^no-exemplars$/, namespace: 'stand-in' }, () => ({
      contents: 'module.exports = { trace: { getSpan: () => undefined }, context: { active: () => undefined } };',
      loader: 'js',
    }));
  },
};

const result = await build({
  absWorkingDir: ROOT,
  entryPoints: ['src/main.ts'],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  splitting: true, // each store's module and its driver stay out of main.js until DB_URL asks for it
  outdir: DIST,
  chunkNames: '[name]-[hash]',
  external: EXTERNAL,
  plugins: [promClientWithoutOpenTelemetry],
  // CommonJS packages inside an ES module bundle still call require() for Node's built-ins.
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
  sourcemap: 'linked',
  legalComments: 'none',
  // Without comments and indentation: V8 keeps the source of every script it loaded, and one
  // non-ASCII character (a comment's "—") makes a whole chunk a two-byte string. MariaDB's
  // process: 6 MiB less at startup, peak RSS 103.5 -> 98.3 MiB. Names stay as written, so a
  // stack trace still names its functions; `node --enable-source-maps` maps it to src/ lines.
  minifyWhitespace: true,
  logLevel: 'warning',
  write: false,
});

mkdirSync(DIST, { recursive: true });
const written = new Set();
let changed = 0;
for (const file of result.outputFiles) {
  written.add(file.path);
  if (existsSync(file.path) && readFileSync(file.path).equals(file.contents)) continue;
  mkdirSync(dirname(file.path), { recursive: true });
  writeFileSync(file.path, file.contents);
  changed += 1;
}

// What an earlier build left at dist/'s top level (older chunks, the per-module output of the
// tsc build this replaced) would otherwise be served by nothing and confuse a reader.
for (const entry of readdirSync(DIST, { withFileTypes: true })) {
  const path = join(DIST, entry.name);
  const stale = /\.js(\.map)?$/.test(entry.name) ? !written.has(path) : entry.name === '.tsbuildinfo';
  if (entry.isFile() && stale) rmSync(path);
  if (entry.isDirectory() && entry.name !== 'ui' && !entry.name.startsWith('.')) rmSync(path, { recursive: true });
}

if (changed > 0) {
  const main = result.outputFiles.find((file) => basename(file.path) === 'main.js');
  console.log(`build: ${relative(ROOT, main.path)} and ${result.outputFiles.length - 1} more file(s) in dist/ (${changed} written)`);
}

// The routes' validators and serializers, generated now instead of compiled at every start
// (src/fast/precompiled-schemas.ts): the app built once from the sources, run by tsx, whatever
// FAST_PATHS says (the built service decides at startup whether to use them).
execFileSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'precompile-schemas.ts')], { cwd: ROOT, stdio: 'inherit' });
