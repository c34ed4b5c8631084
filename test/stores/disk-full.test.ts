// The embedded store's disk fills up (docs/api.md "503", docs/operations.md "Disk full"): a SQLite
// file on a 24 MiB volume of the test's own, written by 8 clients until the disk is full.
//  - writes get the 503 envelope, nothing acknowledged is lost, reads go on;
//  - GET /readyz answers 503 while a write cannot commit, 200 again once space is freed;
//  - a restart on the full disk (schema already current) starts and serves reads.
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ApiClient } from '../helpers/client/api-client.js';
import { describeIf } from '../helpers/requirements.js';
import { mountSmallVolume, type SmallVolume } from '../helpers/infra/small-volume.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { openSqlite } from '../helpers/stores/sqlite.js';

const VOLUME_MIB = 24;
const WRITERS = 8;
/** Written on the volume before the service starts, deleted to free space. */
const BALLAST_BYTES = 3 * 2 ** 20;

describeIf('small-volume')('SQLite on a full disk', () => {
  let volume: SmallVolume;
  let service: ChildService | undefined;
  beforeAll(() => {
    volume = mountSmallVolume(VOLUME_MIB);
  });
  afterAll(async () => {
    await killAllChildServices();
    volume?.remove();
  });

  const dbFile = () => join(volume.dir, 'books.db');
  const ballast = () => join(volume.dir, 'ballast');

  /** 8 clients write books with long titles until each has seen a 503; the ids acknowledged. */
  async function fillTheDisk(client: ApiClient, token: string): Promise<{ acknowledged: string[]; statuses: Set<number>; messages: Set<string> }> {
    const acknowledged: string[] = [];
    const statuses = new Set<number>();
    const messages = new Set<string>();
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, writer) => {
        for (let n = 0; ; n++) {
          const answer = await client.request('POST', '/book', { token, body: { title: `${writer}-${n} ${'x'.repeat(480)}`, author: 'y'.repeat(400), year: 2026 } });
          statuses.add(answer.status);
          if (answer.status === 201) {
            acknowledged.push(/"id":(\d+)/.exec(answer.text)![1]!);
            continue;
          }
          messages.add(`${answer.body.status} ${answer.body.message}`);
          return;
        }
      }),
    );
    return { acknowledged, statuses, messages };
  }

  it('writes answer 503 and nothing acknowledged is lost; reads go on; /readyz is 503 until space is freed; a restart on the full disk serves reads', async () => {
    writeFileSync(ballast(), Buffer.alloc(BALLAST_BYTES, 1));
    service = await startService({ childProcess: true, dbUrl: `sqlite:${dbFile()}`, env: { LOG_LEVEL: 'info' } });
    const client = new ApiClient(service.baseUrl);
    const token = await client.token();
    expect((await client.request('GET', '/readyz')).status).toBe(200);

    const first = await fillTheDisk(client, token);
    expect([...first.statuses].sort()).toEqual([201, 503]);
    expect([...first.messages]).toEqual(['503 Service unavailable']);
    expect(first.acknowledged.length).toBeGreaterThan(100);

    const notReady = await client.request('GET', '/readyz');
    expect(notReady.status).toBe(503);
    expect(notReady.body).toEqual({ status: 503, message: 'Service unavailable', data: null });
    expect(await logLine(service, 'readiness check failed')).toContain('the disk the SQLite store is on is full');
    // Reads go on.
    const list = await client.request('GET', '/books', { token });
    expect(list.status).toBe(200);
    const listed = new Set((list.body.data as { id: number }[]).map((book) => String(book.id)));
    expect(first.acknowledged.filter((id) => !listed.has(id))).toEqual([]);
    expect((await client.request('GET', `/book/${first.acknowledged[0]}`, { token })).status).toBe(200);

    // Space freed: ready again without any write from a client, and writes commit.
    rmSync(ballast());
    expect((await client.request('GET', '/readyz')).status).toBe(200);
    expect((await client.request('POST', '/book', { token, body: { title: 'After', author: 'Space', year: 2026 } })).status).toBe(201);

    // Full again, then a restart on the full disk.
    const second = await fillTheDisk(client, token);
    expect(second.statuses.has(503)).toBe(true);
    expect(await service.stop()).toBe(0);
    writeFileSync(join(volume.dir, 'fill'), Buffer.alloc(0));
    fillRemainingSpace(join(volume.dir, 'fill'));

    service = await startService({ childProcess: true, dbUrl: `sqlite:${dbFile()}`, env: { LOG_LEVEL: 'info' } });
    const restarted = new ApiClient(service.baseUrl);
    const again = await restarted.token();
    const reread = await restarted.request('GET', '/books', { token: again });
    expect(reread.status).toBe(200);
    const relisted = new Set((reread.body.data as { id: number }[]).map((book) => String(book.id)));
    expect([...first.acknowledged, ...second.acknowledged].filter((id) => !relisted.has(id))).toEqual([]);
    expect((await restarted.request('GET', '/readyz')).status).toBe(503);
    expect(service.process.stdout()).not.toMatch(/migration applied/);
    expect(await service.stop()).toBe(0);

    const check = openSqlite(dbFile(), { readonly: true });
    expect(check.prepare('PRAGMA integrity_check').pluck().all()).toEqual(['ok']);
  });
});

/** The first line of the service's log that contains `text`, waited for (the log is written in batches). */
async function logLine(service: ChildService, text: string): Promise<string | undefined> {
  for (let waited = 0; waited < 3_000; waited += 50) {
    const line = service.process.stdout().split('\n').find((candidate) => candidate.includes(text));
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return undefined;
}

/** Appends to `file` until the volume has no byte left. */
function fillRemainingSpace(file: string) {
  const chunk = Buffer.alloc(64 * 1024, 2);
  for (let size = chunk.length; size >= 1; size = Math.floor(size / 2)) {
    try {
      for (;;) writeFileSync(file, chunk.subarray(0, size), { flag: 'a' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    }
  }
}
