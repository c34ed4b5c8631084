// Ports for the servers tests start (private clusters, proxies, child services).
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

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
