// The test helper that picks ports for the servers tests start (private clusters, proxies, child
// services): it must never pick a port the kernel may give away on its own in the meantime.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { freePort } from '../helpers/infra/free-port.js';

const [ephemeralLow, ephemeralHigh] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);

describe('freePort (test helper)', () => {
  it('picks ports outside the kernel ephemeral range, which outgoing connections take their source ports from', async () => {
    for (let i = 0; i < 20; i += 1) {
      const port = await freePort();
      expect(port < ephemeralLow! || port > ephemeralHigh!, `port ${port} inside ${ephemeralLow}-${ephemeralHigh}`).toBe(true);
    }
  });

  it('skips a port something already listens on, and the port it gives can be listened on', async () => {
    const first = await freePort();
    const held = createServer().listen(first + 1, '127.0.0.1');
    await once(held, 'listening');
    try {
      const next = await freePort();
      expect(next).not.toBe(first + 1);
      const server = createServer().listen(next, '127.0.0.1');
      await once(server, 'listening');
      server.close();
    } finally {
      held.close();
    }
  });
});
