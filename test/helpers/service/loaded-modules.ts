// Which files a service process loaded: start it with loadedModulesEnv(file) in its
// environment (record-loaded-modules.mjs records them), then read them with loadedModules(file).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { startService } from './start-service.js';

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

/**
 * Starts the built service as a child process on a SQLite file in `dir`, with `env` on top of
 * the test settings and the recorder on; runs `exercise` against it; stops it (exit 0); returns
 * the files it loaded.
 */
export async function filesLoadedByService(dir: string, name: string, env: Record<string, string>, exercise: (baseUrl: string) => Promise<void>): Promise<string[]> {
  const log = join(dir, `${name}.log`);
  const service = await startService({ childProcess: true, dbUrl: `sqlite:${join(dir, `${name}.db`)}`, env: { ...env, ...loadedModulesEnv(log) } });
  try {
    await exercise(service.baseUrl);
  } finally {
    expect(await service.stop('SIGTERM')).toBe(0);
  }
  return loadedModules(log);
}
