// The build's second step, after tsc (package.json "build" and "prestart", the tests' global
// setup): copies the page's files that need no compiling into dist/ui/web/, beside its compiled
// modules (web/tsconfig.json), so dist/ holds the whole service. A file is written only when it
// changed: an up-to-date build stays untouched.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { URL } from 'node:url';

/** Every file of the page used as it is (src/routes/web-ui.ts serves them). */
const FILES = ['index.html', 'app.css', 'favicon.svg'];

const target = new URL('../dist/ui/web/', import.meta.url);
mkdirSync(target, { recursive: true });
for (const name of FILES) {
  const content = readFileSync(new URL(name, import.meta.url));
  const copy = new URL(name, target);
  if (!existsSync(copy) || !readFileSync(copy).equals(content)) writeFileSync(copy, content);
}
