// Runs the built entry point (dist/main.js) as a child process, as `npm start` does.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { machineryEnv } from './node-http.js';

export const MAIN_JS = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

export interface ServiceProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
}

export function spawnService(env: Record<string, string | undefined>, cwd: string): ServiceProcess {
  const cleanEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...machineryEnv };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) cleanEnv[key] = value;
  const child = spawn(process.execPath, [MAIN_JS], { cwd, env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, 'exit').then(([code, signal]) => (code ?? signal) as number | string);
  return { child, stdout: () => out, stderr: () => err, exited };
}

/**
 * A free TCP port on 127.0.0.1 for a server that a test starts a moment later, taken below the
 * kernel's ephemeral range. Why not `listen(0)`: the kernel hands out port 0 from the ephemeral
 * range, which it also uses for the source ports of outgoing connections. In CI a Galera node's
 * port, chosen that way and bound seconds later, had meanwhile become the source port of another
 * node's connection ("bind: Address already in use"). Below that range the kernel never picks a
 * port by itself, and each Vitest worker (and the global setup) draws from a block of its own, so
 * two test files running at once never choose the same port.
 */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < PORT_BLOCK_SIZE; tries += 1) {
    const port = portBlock.start + (nextPortInBlock++ % PORT_BLOCK_SIZE);
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${portBlock.start}-${portBlock.start + PORT_BLOCK_SIZE - 1}`);
}

const PORT_BLOCK_SIZE = 500;
const portBlock = { start: portBlockStart() };
// A random start inside the block: a file's leftovers (a lingering child) rarely hold the next one.
let nextPortInBlock = Math.floor(Math.random() * PORT_BLOCK_SIZE);

function portBlockStart(): number {
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
  } catch {
    // Not Linux: keep the common default.
  }
  const lowest = 10_000;
  const blocks = Math.floor((ephemeralLow - lowest) / PORT_BLOCK_SIZE);
  if (!(blocks >= 1)) throw new Error(`the ephemeral port range starts at ${ephemeralLow}: no room below it for test servers`);
  // The global setup (no pool id) takes block 0; Vitest workers are numbered from 1.
  const block = Number(process.env.VITEST_POOL_ID ?? 0) % blocks;
  return lowest + block * PORT_BLOCK_SIZE;
}

async function canListen(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return true;
  } catch {
    return false;
  } finally {
    server.close();
  }
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
