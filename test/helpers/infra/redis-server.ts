// A Redis server of the test's own (never the shared one on 6379), on a free port, that a
// test can stop and start again at will. Keeps nothing on disk. ioredis is loaded when used:
// the gate (requirements.ts) loads this module in every suite for redisServerMissing().
import { spawnSync } from 'node:child_process';
import { freePort } from './free-port.js';
import { pollUntil, spawnServer, type ServerProcess } from './server-process.js';

const REDIS_SERVER = process.env.REDIS_SERVER ?? 'redis-server';

/** Undefined when redis-server can be run here, else what is missing. */
export function redisServerMissing(): string | undefined {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `${REDIS_SERVER} (apt-get install -y redis-server, or set REDIS_SERVER)`;
}

/** Whether a Redis server answers PING at `url` now. */
async function answers(url: string): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined); // a refused connection is the answer "no"
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

export interface PrivateRedis {
  url: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Forgets every key. */
  flush(): Promise<void>;
}

export async function createPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let server: ServerProcess | undefined;
  const redis: PrivateRedis = {
    url,
    async start() {
      if (server?.running()) return;
      server = spawnServer(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
      await pollUntil(() => answers(url), 10_000, 50, () => `redis-server on ${url} did not answer within 10 s`);
    },
    async stop() {
      await server?.kill('SIGKILL');
    },
    async flush() {
      const { Redis } = await import('ioredis');
      const client = new Redis(url, { maxRetriesPerRequest: 0 });
      try {
        await client.flushall();
      } finally {
        client.disconnect();
      }
    },
  };
  await redis.start();
  return redis;
}
