// Which files a service process loaded: start it with loadedModulesEnv(file) in its
// environment (record-loaded-modules.mjs records them), then read them with loadedModules(file).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const RECORDER = fileURLToPath(new URL('./record-loaded-modules.mjs', import.meta.url));

/** The environment that makes a process record every module it loads into `file`. */
export function loadedModulesEnv(file: string): Record<string, string> {
  return { NODE_OPTIONS: `--import=${RECORDER}`, LOADED_MODULES_FILE: file };
}

/** The absolute paths of the files the process loaded (ES and CommonJS modules), each once. */
export function loadedModules(file: string): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const paths = lines.flatMap((line) => (line.startsWith('file:') ? [fileURLToPath(line)] : line.startsWith('/') ? [line] : []));
  return [...new Set(paths)];
}
