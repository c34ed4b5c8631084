// Graceful shutdown under load (docs/operations.md "Shutdown"): SIGTERM in the middle of
// a continuous stream of POST /book. The process drains and exits 0, and no acknowledged
// write is lost: every book answered with 201 is in the store when the service starts again.
// Requests refused because the server was closing (connection refused or reset) were never
// acknowledged, so they may or may not be stored.
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { attempt, describeOutcome, type Outcome } from '../helpers/client/attempt.js';
import { killAllChildServices, startService } from '../helpers/service/start-service.js';
import { login } from '../helpers/client/api-client.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';
import type { StoreKind } from '../helpers/stores/dialects.js';
import type { Book } from '../helpers/client/books.js';
import { describeIf } from '../helpers/requirements.js';

const LOOPS = 32;
const LOAD_BEFORE_SIGTERM_MS = 1500;
/** Transport failures that mean "not accepted": the server stopped listening or closed the connection. */
const REFUSED = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

function scenario(kind: StoreKind) {
  const stores: TestStore[] = [];

  afterAll(async () => {
    await killAllChildServices();
    for (const store of stores) await store.drop();
  }, 60_000);

  it(`SIGTERM during ${LOOPS} concurrent POST /book loops: exit 0, every 201 book is stored after a restart`, async () => {
    const store = await createTestStore(kind);
    stores.push(store);
    const service = await startService({ childProcess: true, dbUrl: store.url });
    const token = await login(service.baseUrl);

    const outcomes: Array<Outcome & { sent: Omit<Book, 'id'> }> = [];
    let running = true;
    let exitedAt: number | undefined;
    void service.process.exited.then(() => {
      exitedAt = Date.now();
      running = false;
    });
    async function loop(loopIndex: number) {
      for (let n = 0; running; n++) {
        const sent = { title: `Load ${loopIndex}-${n}`, author: `Loop ${loopIndex}`, year: n % 9999 };
        const outcome = await attempt(service.baseUrl, 'POST', '/book', { token, body: sent, timeoutMs: 20_000 });
        outcomes.push({ ...outcome, sent });
        if (outcome.error !== undefined) await sleep(5); // refused while closing: do not spin
      }
    }
    const loops = Promise.all(Array.from({ length: LOOPS }, (_, i) => loop(i)));

    await sleep(LOAD_BEFORE_SIGTERM_MS);
    const sigtermAt = Date.now();
    service.process.child.kill('SIGTERM');
    const killer = setTimeout(() => service.process.child.kill('SIGKILL'), 20_000);
    const code = await service.process.exited;
    clearTimeout(killer);
    running = false;
    await loops;

    const stderr = service.process.stderr();
    expect(code, `exit code after SIGTERM (took ${(exitedAt ?? Date.now()) - sigtermAt} ms); stderr: ${stderr}`).toBe(0);

    const acknowledged = outcomes.filter((o) => o.status === 201);
    const before = outcomes.filter((o) => o.endedAt < sigtermAt);
    expect(before.length, 'requests answered before SIGTERM').toBeGreaterThan(LOOPS);
    const violations: string[] = [];
    for (const outcome of outcomes) {
      if (outcome.status !== undefined) {
        // Any HTTP answer must be an acknowledged create, in the envelope, of what was sent.
        const data = outcome.body?.data as Book | undefined;
        if (
          outcome.status !== 201 ||
          outcome.body?.message !== 'Book created successfully' ||
          outcome.body.status !== 201 ||
          data?.title !== outcome.sent.title ||
          data.author !== outcome.sent.author ||
          data.year !== outcome.sent.year ||
          !Number.isSafeInteger(data.id)
        ) {
          violations.push(`not a 201 for what was sent: ${describeOutcome(outcome)}`);
        }
      } else if (!REFUSED.has(outcome.errorCode ?? '')) {
        violations.push(`transport failure other than a refused/closed connection: ${describeOutcome(outcome)}`);
      } else if (outcome.endedAt < sigtermAt) {
        // A request sent before the signal may still be unread when the server closes its
        // idle keep-alive connections, and be reset then; but nothing fails before the signal.
        violations.push(`refused before SIGTERM was sent: ${describeOutcome(outcome)}`);
      }
    }
    expect(violations, `service output:\n${service.process.stdout().slice(-4000)}\n${stderr}`).toEqual([]);
    expect(acknowledged.length).toBeGreaterThan(LOOPS);
    const afterSignal = outcomes.filter((o) => o.startedAt >= sigtermAt);
    console.info(
      `[${kind}] SIGTERM under load: ${acknowledged.length} acknowledged (${afterSignal.filter((o) => o.status === 201).length} sent after the signal), ` +
        `${outcomes.length - acknowledged.length} refused, exit ${code} ${(exitedAt ?? Date.now()) - sigtermAt} ms after SIGTERM`,
    );

    // The same store, a new process: every acknowledged book is there, as acknowledged.
    const again = await startService({ childProcess: true, dbUrl: store.url });
    try {
      const list = await attempt(again.baseUrl, 'GET', '/books', { token: await login(again.baseUrl), timeoutMs: 20_000 });
      expect(list.status, list.error ?? list.text?.slice(0, 300)).toBe(200);
      const stored = new Map((list.body!.data as Book[]).map((book) => [book.id, book]));
      const lost = acknowledged
        .map((o) => o.body!.data as Book)
        .filter((book) => JSON.stringify(stored.get(book.id)) !== JSON.stringify(book));
      expect(lost, `acknowledged (201) books missing or different after the restart (of ${acknowledged.length})`).toEqual([]);
      // Stored but never acknowledged (the answer was lost with the connection) is allowed; at most one per loop.
      expect(stored.size - acknowledged.length).toBeLessThanOrEqual(LOOPS);
    } finally {
      expect(await again.stop('SIGTERM')).toBe(0);
    }
  }, 60_000);
}

// Requirement: it needs the shared PostgreSQL server; skipped (reason printed) when DIALECTS leaves PostgreSQL out, or outside CI when it does not answer.
describeIf('postgres')('SIGTERM under load on a fresh PostgreSQL database', () => scenario('postgres'));

describe('SIGTERM under load on a SQLite file', () => scenario('sqlite'));
