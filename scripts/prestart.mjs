#!/usr/bin/env node
// `npm start`'s build step (package.json "prestart"): the build (`npm run build`'s three steps)
// only when a file it reads changed since the last one it made, else nothing. Deciding that
// takes a few milliseconds (the sizes and times of the files under src/ and web/ and of the
// build's own files, against dist/.build-inputs); the build's own up-to-date checks start
// esbuild and tsc, about 2.5 s, which every `npm start` used to pay (docs/operations.md).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.build-inputs');
const FOLDERS = ['src', 'web'];
const FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'scripts/build.mjs', 'scripts/precompile-schemas.ts', 'scripts/prestart.mjs'];

function* filesUnder(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

/** A digest of every input's path, size and modification time. */
function inputsDigest() {
  const paths = [...FOLDERS.flatMap((folder) => [...filesUnder(join(ROOT, folder))]), ...FILES.map((file) => join(ROOT, file))].sort();
  const hash = createHash('sha256');
  for (const path of paths) {
    const { size, mtimeMs } = existsSync(path) ? statSync(path) : { size: -1, mtimeMs: 0 };
    hash.update(`${relative(ROOT, path)}\0${size}\0${mtimeMs}\n`);
  }
  return hash.digest('hex');
}

const digest = inputsDigest();
const upToDate = existsSync(join(ROOT, 'dist', 'main.js')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest;
if (!upToDate) {
  console.log('npm start: a file the build reads changed since the last build (or there was none): building');
  const run = (command, args) => execFileSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  run(process.execPath, [join(ROOT, 'scripts', 'build.mjs')]);
  run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-b', 'web']);
  run(process.execPath, [join(ROOT, 'web', 'copy-files.mjs')]);
  writeFileSync(STAMP, digest);
}
