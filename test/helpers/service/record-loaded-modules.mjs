// Preloaded into a service process by tests (`node --import`): when the process exits, writes
// the file of every CommonJS module it loaded, one per line, to LOADED_MODULES_FILE. Packages
// outside the bundle (dist/) are loaded this way; what is absent was never loaded.
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
if (file) {
  // The one module cache every require() shares, whichever module made it.
  const { cache } = createRequire(import.meta.url);
  process.on('exit', () => {
    writeFileSync(file, `${Object.keys(cache).join('\n')}\n`);
  });
}
