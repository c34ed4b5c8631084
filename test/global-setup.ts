// Compiles src/ to dist/ once before the suites: the startup tests run the built entry
// point exactly as `npm start` does.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';

export default function setup() {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', 'tsconfig.build.json'], { stdio: 'inherit' });
}
