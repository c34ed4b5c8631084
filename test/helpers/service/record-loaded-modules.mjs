// Preloaded into a service process by tests (`node --import`, see loaded-modules.ts): records in
// LOADED_MODULES_FILE every module the process loads, one per line. ES modules (dist/'s files,
// imported packages) are written as they load, by a module hook; CommonJS modules (packages
// outside the bundle, required from node_modules) when the process exits, from the one module
// cache every require() shares. What is absent was never loaded.
import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';

const file = process.env.LOADED_MODULES_FILE;
if (file) {
  // Module hooks run in a thread of their own: the hook writes each URL to the file itself.
  const hook = `
    import { appendFileSync } from 'node:fs';
    export async function load(url, context, next) {
      appendFileSync(${JSON.stringify(file)}, url + '\\n');
      return next(url, context);
    }
  `;
  register(`data:text/javascript,${encodeURIComponent(hook)}`);
  const { cache } = createRequire(import.meta.url);
  process.on('exit', () => {
    appendFileSync(file, `${Object.keys(cache).join('\n')}\n`);
  });
}
