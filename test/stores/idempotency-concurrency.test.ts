// One Idempotency-Key sent by many clients at once (issue 22), over several processes on one
// store: 50 identical POST /book with the same key, spread over the instances, create exactly
// one book; every answer is that book's 201 (the same bytes, one original and the rest marked
// replayed) or 409 "still being processed"; once the first 201 is out, repeats answer it; the
// 409 clients retrying with the same key get it too. On SQLite (one service, WORKERS=2, one file),
// PostgreSQL and MariaDB (two instances on one database), and a private 3-node Galera cluster
// (three instances, each on another node). Several rounds, each with a fresh key.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient, login, type ApiResponse } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { KEY_IN_PROGRESS, booksTitled, headerOf, isReplayed } from '../helpers/client/idempotency.js';
import { startPrivateGalera, type PrivateGalera } from '../helpers/infra/galera-cluster.js';
import { describeIf } from '../helpers/requirements.js';
import { jsonLogLines } from '../helpers/service/main-process.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';

/** Identical requests sent at once per round. */
const CONCURRENT = 50;
const ROUNDS = 5;
/** Repeats sent to every instance as soon as the first 201 of a round is answered. */
const REPEATS_PER_INSTANCE = 2;
/** How long a client answered 409 keeps retrying (a little later each time) before that is a failure. */
const RETRY_FOR_MS = 15_000;
/** Three instances race for the migration lease through different Galera nodes. */
const GALERA_START_TIMEOUT_MS = 45_000;

/** The parts of an answer this test compares, in one short line. */
function describeAnswer(answer: ApiResponse): string {
  return `HTTP ${answer.status} (Idempotent-Replayed: ${headerOf(answer, 'idempotent-replayed') ?? '-'}, ETag: ${headerOf(answer, 'etag') ?? '-'}) ${answer.text.slice(0, 200)}`;
}

/** At most this many problems of one round are listed (a broken round has one per answer). */
const PROBLEMS_SHOWN = 6;

function post(instance: ChildService, token: string, key: string, body: object): Promise<ApiResponse> {
  return new ApiClient(instance.baseUrl).request('POST', '/book', { token, body, headers: { 'idempotency-key': key } });
}

/**
 * One round with a fresh key over `instances` (request i goes to instance i mod n); what went
 * wrong, as readable lines (empty: nothing).
 */
async function raceOneKey(instances: readonly ChildService[], token: string, round: number): Promise<string[]> {
  const key = `race-${round}-${randomUUID()}`;
  const body = { title: `Race ${round} ${key}`, author: 'Idempotency', year: 2000 + round };
  const problems: string[] = [];

  // As soon as one client holds the 201, the answer is stored: from then on every repeat replays it.
  let repeats: Promise<ApiResponse[]> | undefined;
  const burst = await Promise.all(
    Array.from({ length: CONCURRENT }, async (_, i) => {
      const answer = await post(instances[i % instances.length]!, token, key, body);
      if (answer.status === 201 && repeats === undefined) {
        repeats = Promise.all(instances.flatMap((instance) => Array.from({ length: REPEATS_PER_INSTANCE }, () => post(instance, token, key, body))));
      }
      return answer;
    }),
  );
  const afterFirst = (await repeats) ?? [];

  // The clients answered 409 retry, a little later, with the same key.
  const retried = await Promise.all(
    burst.flatMap((answer, i) => {
      if (answer.status !== 409) return [];
      return [
        (async () => {
          let latest = answer;
          for (const started = Date.now(); latest.status === 409 && Date.now() - started < RETRY_FOR_MS; ) {
            await sleep(100);
            latest = await post(instances[i % instances.length]!, token, key, body);
          }
          return latest;
        })(),
      ];
    }),
  );

  const created = [...burst, ...afterFirst, ...retried].filter((answer) => answer.status === 201);
  const original = created.filter((answer) => !isReplayed(answer));
  if (original.length !== 1) problems.push(`${original.length} original (not replayed) 201 answers, expected exactly 1`);
  const reference = original[0] ?? created[0];
  if (reference === undefined) return [`round ${round}: no 201 at all: ${burst.slice(0, 3).map(describeAnswer).join(' | ')}`];

  for (const answer of burst) {
    if (answer.status === 409) {
      if (answer.text !== JSON.stringify(KEY_IN_PROGRESS)) problems.push(`a 409 that is not the "still being processed" envelope: ${describeAnswer(answer)}`);
    } else if (answer.status !== 201) {
      problems.push(`neither 201 nor 409: ${describeAnswer(answer)}`);
    }
  }
  for (const [what, answers] of [
    ['a 201 of the burst', burst],
    ['a repeat sent after the first 201', afterFirst],
    ['a retry after a 409', retried],
  ] as const) {
    for (const answer of answers) {
      if (what !== 'a 201 of the burst' && answer.status !== 201) problems.push(`${what} is not 201: ${describeAnswer(answer)}`);
      if (answer.status !== 201) continue;
      if (answer.text !== reference.text || headerOf(answer, 'etag') !== headerOf(reference, 'etag')) {
        problems.push(`${what} differs from the first 201 (${describeAnswer(reference)}): ${describeAnswer(answer)}`);
      }
      if (answer !== original[0] && !isReplayed(answer)) problems.push(`${what} is a second original (no Idempotent-Replayed: true): ${describeAnswer(answer)}`);
    }
  }

  const stored = await booksTitled(new ApiClient(instances[0]!.baseUrl), token, body.title);
  if (stored.length !== 1) problems.push(`${stored.length} books created, expected exactly 1: ${JSON.stringify(stored.map((book) => book.id))}`);
  const answered = (JSON.parse(reference.text) as { data: Book }).data;
  if (stored[0] !== undefined && JSON.stringify(stored[0]) !== JSON.stringify(answered)) {
    problems.push(`the stored book ${JSON.stringify(stored[0])} is not the one the 201 answered ${JSON.stringify(answered)}`);
  }
  const counts = `${burst.filter((a) => a.status === 201).length} × 201 and ${burst.filter((a) => a.status === 409).length} × 409 in the burst`;
  console.info(`[idempotency race] round ${round} over ${instances.length} instances: ${counts}`);
  const shown = problems.slice(0, PROBLEMS_SHOWN).map((problem) => `round ${round}: ${problem}`);
  if (problems.length > PROBLEMS_SHOWN) shown.push(`round ${round}: … and ${problems.length - PROBLEMS_SHOWN} more`);
  return shown;
}

/** The test every store runs: ROUNDS rounds, each with a fresh key. */
function itRacesOneKey(instances: () => readonly ChildService[], afterRounds?: () => Promise<void>) {
  it(`${ROUNDS} rounds of ${CONCURRENT} identical POST /book at once with one key: one book; each answer its 201 or 409; repeats after the first 201 and retries after a 409 get that 201`, async () => {
    const token = await login(instances()[0]!.baseUrl);
    const problems: string[] = [];
    for (let round = 0; round < ROUNDS; round++) problems.push(...(await raceOneKey(instances(), token, round)));
    expect(problems).toEqual([]);
    await afterRounds?.();
  }, 180_000);
}

// Requirement: a SQLite file store; skipped only when DIALECTS leaves SQLite out.
describeIf('sqlite')('SQLite: one service with WORKERS=2 on a file store', () => {
  let dir: string;
  let service: ChildService;
  const logLines = () => jsonLogLines(service.process);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'idempotency-race-'));
    service = await startService({ childProcess: true, dbUrl: `sqlite:${join(dir, 'books.db')}`, env: { WORKERS: '2', LOG_LEVEL: 'info' } });
    // Both workers listening, so that the race's connections are spread over both.
    for (let waited = 0; logLines().filter((line) => line.msg === 'book service ready').length < 2; waited += 50) {
      if (waited > 15_000) throw new Error(`the workers did not both start:\n${service.process.stdout()}`);
      await sleep(50);
    }
  }, 60_000);

  afterAll(async () => {
    await service?.stop('SIGTERM');
    await killAllChildServices();
    rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  itRacesOneKey(
    () => [service],
    async () => {
      // Both workers answered some of the requests: the race really crossed processes.
      await expect.poll(() => logLines().filter((line) => line.route === '/book').length).toBeGreaterThan(CONCURRENT);
      expect(new Set(logLines().filter((line) => line.route === '/book').map((line) => line.pid)).size).toBe(2);
    },
  );
});

for (const kind of ['postgres', 'mysql'] as const) {
  // Requirement: the shared server of that kind; skipped (reason printed) when DIALECTS leaves it out, or outside CI when it does not answer.
  describeIf(kind)(`${kind === 'postgres' ? 'PostgreSQL' : 'MariaDB'}: two instances on one database`, () => {
    let store: TestStore;
    let instances: ChildService[] = [];

    beforeAll(async () => {
      store = await createTestStore(kind);
      // One after the other: the first migrates the empty database.
      const first = await startService({ childProcess: true, dbUrl: store.url });
      instances = [first, await startService({ childProcess: true, dbUrl: store.url })];
    }, 60_000);

    afterAll(async () => {
      await Promise.all(instances.map((instance) => instance.stop('SIGTERM')));
      await killAllChildServices();
      await store?.drop();
    }, 60_000);

    itRacesOneKey(() => instances);
  });
}

// Requirement: it runs a private 3-node Galera cluster; skipped (reason printed) only outside CI where Galera or rsync is missing.
describeIf('galera-binaries')('Galera: three instances, each on another node of a private 3-node cluster', () => {
  const database = 'books_idempotency';
  let cluster: PrivateGalera;
  let instances: ChildService[] = [];

  beforeAll(async () => {
    cluster = await startPrivateGalera();
    await cluster.createDatabase(database);
    const orders = [
      [0, 1, 2],
      [1, 2, 0],
      [2, 0, 1],
    ];
    // The first migrates; the others then start on the migrated database.
    const first = await startService({ childProcess: true, dbUrl: cluster.multiHostUrl(database, orders[0]), startTimeoutMs: GALERA_START_TIMEOUT_MS });
    const rest = await Promise.all(
      orders.slice(1).map((order) => startService({ childProcess: true, dbUrl: cluster.multiHostUrl(database, order), startTimeoutMs: GALERA_START_TIMEOUT_MS })),
    );
    instances = [first, ...rest];
  }, 180_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop('SIGKILL')));
    await killAllChildServices();
    await cluster?.destroy();
  }, 60_000);

  itRacesOneKey(() => instances);
});
