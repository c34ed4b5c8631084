// The built entry point (dist/main.js) as a child process, as `npm start` runs it, with exactly
// the environment given: what startService({ childProcess: true }) is made of.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { switchesEnv } from '../node-http.js';

export const MAIN_JS = fileURLToPath(new URL('../../../dist/main.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

/** `node dist/main.js` in `cwd`, with PATH, HOME and `env` only (an undefined value leaves a variable out). */
export function spawnMain(env: Record<string, string | undefined>, cwd: string): ServiceProcess {
  const cleanEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...switchesEnv };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) cleanEnv[key] = value;
  const child = spawn(process.execPath, [MAIN_JS], { cwd, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** One JSON log line of the service, with the fields tests look at. */
export interface ServiceLogLine {
  pid: number;
  msg: string;
  route?: string;
  method?: string;
  status?: number;
}

/** The service's JSON log lines so far (LOG_LEVEL=info: one per request, with the worker's pid). */
export function jsonLogLines(service: ServiceProcess): ServiceLogLine[] {
  return service
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as ServiceLogLine);
}

/** Polls until the service answers on `baseUrl`, or throws after `timeoutMs`. */
export async function waitUntilAnswering(baseUrl: string, service: ServiceProcess, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (service.child.exitCode !== null) throw new Error(`service exited: ${service.stderr()}`);
    try {
      await fetch(`${baseUrl}/books`);
      return;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`service did not answer within ${timeoutMs} ms: ${service.stderr()}`);
}
