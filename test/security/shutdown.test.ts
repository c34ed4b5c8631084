// Graceful shutdown of the built service (dist/main.js as a child process): on SIGTERM the
// requests in flight complete (a body still arriving included), new connections are not
// served half-way, idle keep-alive connections do not hold the exit, and the process exits 0
// within the 10 s grace; a second signal during the drain forces an immediate non-zero exit;
// a client that stalls mid-upload cannot hold the shutdown past its REQUEST_TIMEOUT.
import { openSqlite } from '../helpers/stores/sqlite.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { ServiceProcess } from '../helpers/service/main-process.js';
import { killAllChildServices, startService } from '../helpers/service/start-service.js';
import { parseResponse, requestBytes, type RawResponse } from '../helpers/client/raw-http.js';
import { login } from '../helpers/client/api-client.js';
import { expectEnvelopeShape } from '../helpers/client/envelope.js';
import { DUPLICATE_SIGNAL_WINDOW_MS } from '../../src/commands/stop-signals.js';

const workDir = mkdtempSync(join(tmpdir(), 'books-shutdown-'));
afterAll(() => rmSync(workDir, { recursive: true, force: true }));

interface Running {
  service: ServiceProcess;
  port: number;
  baseUrl: string;
  dbFile: string;
}

afterEach(killAllChildServices);

async function start(env: Record<string, string> = {}): Promise<Running> {
  const dbFile = join(mkdtempSync(join(workDir, 'db-')), 'books.db');
  // The service's own log level and failed-login limit, not the test settings' quieter ones.
  const started = await startService({
    childProcess: true,
    dbUrl: `sqlite:${dbFile}`,
    cwd: workDir,
    env: { LOG_LEVEL: undefined, LOGIN_RATE_LIMIT: undefined, ...env },
  });
  return { service: started.process, port: started.port, baseUrl: started.baseUrl, dbFile };
}

/** A raw connection: write when you like, read everything, know when it closed. */
function openConnection(port: number) {
  const socket: Socket = connect({ port, host: '127.0.0.1' });
  const chunks: Buffer[] = [];
  let error: string | undefined;
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.on('error', (err: NodeJS.ErrnoException) => (error ??= err.code ?? err.message));
  const closed = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
  const connected = new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    connected,
    closed,
    received: () => Buffer.concat(chunks),
    response: (): RawResponse | undefined => parseResponse(Buffer.concat(chunks)),
    error: () => error,
  };
}

/** Resolves with the exit code (or signal) and how long after `since` it came, or 'running' after `timeoutMs`. */
async function exitWithin(service: ServiceProcess, since: number, timeoutMs: number): Promise<{ code: number | string; afterMs: number }> {
  const result = await Promise.race([service.exited.then((code) => ({ code, afterMs: Date.now() - since })), sleep(timeoutMs).then(() => undefined)]);
  if (result === undefined) throw new Error(`still running ${timeoutMs} ms after the signal\n${service.stdout().slice(-2000)}\n${service.stderr()}`);
  return result;
}

function storedTitles(dbFile: string): string[] {
  const db = openSqlite(dbFile, { readonly: true });
  try {
    return (db.prepare('select title from books order by id').all() as Array<{ title: string }>).map((row) => row.title);
  } finally {
    db.close();
  }
}

describe('graceful shutdown (dist/main.js)', () => {
  it('SIGTERM while a body is still arriving (~1 s): that request completes with 201, the book is stored, new connections are not half-served, exit 0 within 10 s', async () => {
    const { service, port, baseUrl, dbFile } = await start();
    const auth = await login(baseUrl);
    const body = JSON.stringify({ title: 'In flight', author: 'Drain', year: 2024 });
    const slow = openConnection(port);
    await slow.connected;
    slow.socket.write(requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', auth], ['Content-Type', 'application/json'], ['Content-Length', String(body.length)]] }));
    slow.socket.write(body.slice(0, 5));
    await sleep(300); // the request is in the server's hands before the signal

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    // The rest of the body over ~1 s.
    for (const piece of body.slice(5).match(/.{1,10}/g) ?? []) {
      await sleep(250);
      slow.socket.write(piece);
    }

    // Meanwhile a new connection: refused, or answered in full (never accepted and dropped).
    const late = openConnection(port);
    const lateOutcome = await late.connected.then(
      async () => {
        late.socket.write(requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', auth]] }));
        await Promise.race([late.closed, sleep(5_000)]);
        return 'connected';
      },
      () => 'refused',
    );
    if (lateOutcome === 'connected' && late.received().length > 0) expectEnvelopeShape(late.response()!, 'request during the drain');

    await Promise.race([slow.closed, sleep(10_000)]);
    const response = slow.response();
    expect(response, `in-flight request got no response: ${JSON.stringify(slow.received().toString('latin1'))} (${slow.error() ?? 'no error'})`).toBeDefined();
    const envelope = expectEnvelopeShape(response!, 'in-flight POST /book');
    expect(envelope).toMatchObject({ status: 201, message: 'Book created successfully', data: { title: 'In flight', author: 'Drain', year: 2024 } });

    const { code, afterMs } = await exitWithin(service, signalledAt, 10_000);
    expect(code, service.stderr()).toBe(0);
    expect(afterMs).toBeLessThan(10_000);
    expect(service.stderr()).not.toMatch(/\n\s+at /);
    expect(storedTitles(dbFile)).toEqual(['In flight']);
  }, 30_000);

  it('SIGTERM with only idle keep-alive connections open: they do not hold the exit (exit 0 within 2 s)', async () => {
    const { service, port, baseUrl } = await start();
    const auth = await login(baseUrl);
    const idle = Array.from({ length: 3 }, () => openConnection(port));
    for (const connection of idle) {
      await connection.connected;
      connection.socket.write(requestBytes({ method: 'GET', path: '/books', headers: [['Authorization', auth], ['Connection', 'keep-alive']] }));
    }
    await sleep(300);
    for (const connection of idle) expect(connection.response()?.status).toBe(200);

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    const { code, afterMs } = await exitWithin(service, signalledAt, 10_000);
    expect(code).toBe(0);
    expect(afterMs).toBeLessThan(2_000);
  }, 30_000);

  it('a second signal during the drain forces an immediate non-zero exit', async () => {
    const { service, port, baseUrl } = await start();
    const auth = await login(baseUrl);
    // An upload that never finishes keeps the drain going.
    const stalled = openConnection(port);
    await stalled.connected;
    stalled.socket.write(requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', auth], ['Content-Type', 'application/json'], ['Content-Length', '100']] }));
    stalled.socket.write('{"title":');
    await sleep(300);

    service.child.kill('SIGTERM');
    // The same signal within the window counts once (measured from when the service handled
    // the first, which can be later than it was sent): wait past it, the drain goes on meanwhile.
    await sleep(DUPLICATE_SIGNAL_WINDOW_MS + 500);
    expect(service.child.exitCode, 'the first signal waits for the in-flight request').toBeNull();

    const secondAt = Date.now();
    service.child.kill('SIGTERM');
    const { code, afterMs } = await exitWithin(service, secondAt, 5_000);
    expect(code).not.toBe(0);
    expect(afterMs).toBeLessThan(1_000);
  }, 30_000);

  it('SIGINT then SIGTERM: the second signal of either kind forces the exit', async () => {
    const { service, port, baseUrl } = await start();
    const auth = await login(baseUrl);
    const stalled = openConnection(port);
    await stalled.connected;
    stalled.socket.write(requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', auth], ['Content-Length', '50']] }));
    stalled.socket.write('{');
    await sleep(300);

    service.child.kill('SIGINT');
    await sleep(500);
    expect(service.child.exitCode).toBeNull();
    const secondAt = Date.now();
    service.child.kill('SIGTERM');
    const { code, afterMs } = await exitWithin(service, secondAt, 5_000);
    expect(code).not.toBe(0);
    expect(afterMs).toBeLessThan(1_000);
  }, 30_000);

  it('REQUEST_TIMEOUT=2: a client that stalls mid-upload cannot hold the shutdown; it gets 408 or a close and the process exits 0 within ~5 s', async () => {
    const { service, port, baseUrl } = await start({ REQUEST_TIMEOUT: '2' });
    const auth = await login(baseUrl);
    const stalled = openConnection(port);
    await stalled.connected;
    stalled.socket.write(requestBytes({ method: 'POST', path: '/book', headers: [['Authorization', auth], ['Content-Type', 'application/json'], ['Content-Length', '100']] }));
    stalled.socket.write('{"title":');
    await sleep(300);

    const signalledAt = Date.now();
    service.child.kill('SIGTERM');
    const closedAt = await Promise.race([stalled.closed, sleep(12_000).then(() => undefined)]);
    expect(closedAt, 'the stalled connection is still open 12 s after SIGTERM').toBeDefined();
    expect(closedAt! - signalledAt, 'the stalled upload outlived its REQUEST_TIMEOUT during the drain').toBeLessThan(5_000);
    const response = stalled.response();
    if (response !== undefined) expect(expectEnvelopeShape(response, 'stalled upload').status).toBe(408);
    const { code, afterMs } = await exitWithin(service, signalledAt, 12_000);
    expect(afterMs, 'exit delayed by a stalled client').toBeLessThan(6_000);
    expect(code, service.stdout().slice(-1000)).toBe(0);
  }, 30_000);
});
