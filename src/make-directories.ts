// mkdirSync(dir, { recursive: true }), one level at a time, stopping at the first failure:
// Node's recursive mkdir never returns under /proc (it retries ENOENT there forever), so an
// impossible path such as sqlite:/proc/x/books.db would hang the startup.
import { existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export function makeDirectories(dir: string): void {
  const missing: string[] = [];
  for (let current = dir; !existsSync(current); current = dirname(current)) {
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      // Another process (a worker of the same service) made it meanwhile.
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
