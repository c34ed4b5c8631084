// GET /healthz and GET /readyz (docs/operations.md "Health, metrics and the API document"): liveness touches nothing; readiness
// pings the store, answers 503 "Service unavailable" while it is down (within its 2 s bound)
// and 200 again once it is back. The outage runs the built service as a child process over a
// private PostgreSQL cluster (test/helpers/infra/postgres-cluster.ts) that the test stops and restarts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPrivatePostgres, type PrivatePostgres } from '../helpers/infra/postgres-cluster.js';
import { startService, useService, type ChildService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { describeIf } from '../helpers/requirements.js';

const ALIVE = { status: 200, message: 'Service is alive', data: { status: 'ok' } };
const READY = { status: 200, message: 'Service is ready', data: { status: 'ok' } };
const UNAVAILABLE = { status: 503, message: 'Service unavailable', data: null };
/** docs/operations.md: readiness gives up on the store after 2 s; allow scheduling slack on top. */
const READY_BOUND_MS = 2_000 + 1_500;

interface Probe {
  status: number;
  body: unknown;
  contentType: string | null;
  ms: number;
}

async function probe(baseUrl: string, path: string, headers: Record<string, string> = {}): Promise<Probe> {
  const started = Date.now();
  const response = await fetch(baseUrl + path, { headers, signal: AbortSignal.timeout(15_000) });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), contentType: response.headers.get('content-type'), ms: Date.now() - started };
}

/** Probes `path` until `accept` holds (returns that probe) or `timeoutMs` passes (throws with the last one). */
async function probeUntil(baseUrl: string, path: string, accept: (probe: Probe) => boolean, timeoutMs: number): Promise<Probe> {
  const deadline = Date.now() + timeoutMs;
  let last: Probe | undefined;
  while (Date.now() < deadline) {
    last = await probe(baseUrl, path);
    if (accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${path} did not reach the expected answer within ${timeoutMs} ms; last: ${JSON.stringify(last)}`);
}

forEachStore((kind) => {
  describe('GET /healthz and GET /readyz', () => {
    const service = useService(kind);

    it('/healthz without a token → 200 {status:200, message:"Service is alive", data:{status:"ok"}}', async () => {
      const answer = await probe(service.current.baseUrl, '/healthz');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(ALIVE);
      expect(answer.contentType).toMatch(/^application\/json/);
    });

    it('/healthz ignores a bad token: it is public', async () => {
      const answer = await probe(service.current.baseUrl, '/healthz', { authorization: 'not-a-token' });
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(ALIVE);
    });

    it('/readyz without a token, store up → 200 {status:200, message:"Service is ready", data:{status:"ok"}}', async () => {
      const answer = await probe(service.current.baseUrl, '/readyz');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual(READY);
      expect(answer.contentType).toMatch(/^application\/json/);
    });

    it('HEAD /healthz and HEAD /readyz answer 200 too (probes that only look at the status)', async () => {
      for (const path of ['/healthz', '/readyz']) {
        const response = await fetch(service.current.baseUrl + path, { method: 'HEAD' });
        expect(response.status, path).toBe(200);
      }
    });
  });
});

// Requirement: it runs a private PostgreSQL cluster; skipped (reason printed) only outside CI where PostgreSQL's server binaries are missing.
describeIf('pg-binaries')('GET /readyz while the store is down (child process over a private PostgreSQL cluster)', () => {
  let cluster: PrivatePostgres;
  let service: ChildService;
  let baseUrl: string;
  let cwd: string;

  beforeAll(async () => {
    cluster = await createPrivatePostgres();
    await cluster.start();
    const dbUrl = await cluster.createDatabase('books_readyz');
    cwd = mkdtempSync(join(tmpdir(), 'books-readyz-'));
    service = await startService({ childProcess: true, dbUrl, env: { DB_QUERY_TIMEOUT: '2' }, cwd });
    baseUrl = service.baseUrl;
  }, 120_000);

  afterAll(async () => {
    await service?.stop('SIGKILL');
    await cluster?.destroy();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  }, 60_000);

  it('200 "Service is ready" → 503 envelope while PostgreSQL is stopped (liveness stays 200) → 200 once it is back', async () => {
    expect((await probe(baseUrl, '/readyz')).body).toEqual(READY);

    await cluster.stop('fast');
    const down = await probeUntil(baseUrl, '/readyz', (answer) => answer.status !== 200, 10_000);
    expect(down.status).toBe(503);
    expect(down.body).toEqual(UNAVAILABLE);
    expect(down.contentType).toMatch(/^application\/json/);
    // Every probe during the outage stays 503 and within the bound, and liveness is unaffected.
    for (let i = 0; i < 3; i++) {
      const again = await probe(baseUrl, '/readyz');
      expect(again.status).toBe(503);
      expect(again.body).toEqual(UNAVAILABLE);
      expect(again.ms).toBeLessThan(READY_BOUND_MS);
      const alive = await probe(baseUrl, '/healthz');
      expect(alive.status).toBe(200);
      expect(alive.body).toEqual(ALIVE);
    }
    expect(service.process.child.exitCode, `the service exited: ${service.process.stderr()}`).toBeNull();

    await cluster.start();
    const back = await probeUntil(baseUrl, '/readyz', (answer) => answer.status === 200, 15_000);
    expect(back.body).toEqual(READY);
    expect(service.process.child.exitCode, `the service exited: ${service.process.stderr()}`).toBeNull();
  }, 90_000);

  it('a stalled store (SIGSTOP on PostgreSQL) still answers /readyz within the 2 s bound', async () => {
    // Not refused but silent: every PostgreSQL process of the cluster is frozen, so the pool's
    // connections hang without an error; readiness must not hang with them.
    await cluster.freeze();
    try {
      const answer = await probe(baseUrl, '/readyz');
      expect(answer.status).toBe(503);
      expect(answer.body).toEqual(UNAVAILABLE);
      expect(answer.ms).toBeLessThan(READY_BOUND_MS);
      expect((await probe(baseUrl, '/healthz')).body).toEqual(ALIVE);
    } finally {
      cluster.thaw();
    }
    const back = await probeUntil(baseUrl, '/readyz', (answer) => answer.status === 200, 15_000);
    expect(back.body).toEqual(READY);
  }, 60_000);
});
