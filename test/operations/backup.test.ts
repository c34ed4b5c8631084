// Backup and restore (docs/operations.md "Backup and restore"):
//  - SQLite: `node dist/main.js backup FILE` while 32 clients keep writing through the service:
//    the copy opens, passes SQLite's integrity check, holds every write acknowledged before the
//    backup started, and a service started on it (the restore) answers the same list;
//  - PostgreSQL (pg_dump/pg_restore) and MariaDB (mariadb-dump): the documented round trip
//    restores a service that answers the same list, replays a stored Idempotency-Key answer,
//    and applies no migration again;
//  - mistakes: a server store, the store itself as FILE, no FILE.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../helpers/client/api-client.js';
import { TEST_SECRET } from '../helpers/client/test-account.js';
import { describeIf } from '../helpers/requirements.js';
import { MAIN_JS } from '../helpers/service/main-process.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { openSqlite } from '../helpers/stores/sqlite.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';

const WRITERS = 32;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'books-backup-'));
});
afterAll(async () => {
  await killAllChildServices();
  rmSync(dir, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `node dist/main.js backup …args` with DB_URL and nothing else set; resolves when it exits. */
function runBackup(dbUrl: string, args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MAIN_JS, 'backup', ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', DB_URL: dbUrl },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The whole list, as the service answers it. */
async function listOf(service: ChildService): Promise<unknown[]> {
  const client = new ApiClient(service.baseUrl);
  const answer = await client.request('GET', '/books', { token: await client.token() });
  expect(answer.status).toBe(200);
  return answer.body.data as unknown[];
}

describe('SQLite: node dist/main.js backup FILE while 32 clients write', () => {
  it('the copy opens, passes the integrity check, holds every write acknowledged before the backup started; a service on it answers the same list', async () => {
    const file = join(dir, 'live.db');
    // A store of some size, so that the copy takes more than an instant.
    expect(spawnSync(process.execPath, [MAIN_JS, 'migrate'], { env: { ...process.env, DB_URL: `sqlite:${file}` } }).status).toBe(0);
    const filler = openSqlite(file);
    filler.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
      INSERT INTO books (title, author, year) SELECT 'Filler ' || i, 'Author ' || (i % 997), 1900 + i % 120 FROM n`);
    filler.close();

    const service = await startService({ childProcess: true, dbUrl: `sqlite:${file}` });
    const client = new ApiClient(service.baseUrl);
    const token = await client.token();
    const acknowledged: string[] = [];
    let writing = true;
    let failed = 0;
    const writers = Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; writing; n++) {
        const answer = await client.request('POST', '/book', { token, body: { title: `Written ${writer}-${n}`, author: 'Writer', year: 2026 } });
        if (answer.status === 201) acknowledged.push(/"id":(\d+)/.exec(answer.text)![1]!);
        else failed++;
      }
    });
    try {
      while (acknowledged.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
      const beforeBackup = [...acknowledged];
      const backupFile = join(dir, 'copy.db');
      const run = await runBackup(`sqlite:${file}`, [backupFile]);
      const duringBackup = acknowledged.length - beforeBackup.length;
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/"msg":"backup written and checked"/);
      expect(duringBackup, 'writes went on while the backup ran').toBeGreaterThan(0);

      const copy = openSqlite(backupFile, { readonly: true, fileMustExist: true });
      try {
        expect(copy.prepare('PRAGMA integrity_check').pluck().all()).toEqual(['ok']);
        expect(copy.prepare('PRAGMA journal_mode').pluck().get()).toBe('delete');
        const ids = new Set((copy.prepare('SELECT id FROM books').pluck().all() as number[]).map(String));
        const missing = beforeBackup.filter((id) => !ids.has(id));
        expect(missing, 'acknowledged before the backup started, missing from the copy').toEqual([]);
      } finally {
        copy.close();
      }
      expect(existsSync(`${backupFile}-wal`)).toBe(false);
      writing = false;
      await Promise.all(writers);
      expect(failed).toBe(0);

      // The restore: a service started on the copy answers what the copy holds.
      const restored = await startService({ childProcess: true, dbUrl: `sqlite:${backupFile}` });
      const copyCount = Number(openSqlite(backupFile, { readonly: true }).prepare('SELECT count(*) FROM books').pluck().get());
      const list = await listOf(restored);
      expect(list).toHaveLength(copyCount);
      expect(list.length).toBeGreaterThanOrEqual(60_000 + beforeBackup.length);
      await restored.stop();
    } finally {
      writing = false;
      await Promise.all(writers);
      await service.stop();
    }
  });

  it('writes still only in the WAL (not yet checkpointed into the file) are in the copy', async () => {
    const file = join(dir, 'wal.db');
    const service = await startService({ childProcess: true, dbUrl: `sqlite:${file}` });
    try {
      const client = new ApiClient(service.baseUrl);
      const token = await client.token();
      for (let n = 0; n < 20; n++) await client.createBook(token, { title: `In the WAL ${n}`, author: 'Writer', year: 2026 });
      expect(existsSync(`${file}-wal`)).toBe(true);
      const run = await runBackup(`sqlite:${file}`, ['wal-copy.db']);
      expect(run.code, run.stderr).toBe(0);
      const copy = openSqlite(join(dir, 'wal-copy.db'), { readonly: true });
      expect(copy.prepare("SELECT count(*) FROM books WHERE title LIKE 'In the WAL %'").pluck().get()).toBe(20);
    } finally {
      await service.stop();
    }
  });

  it('FILE is replaced only by a whole, checked copy; the store itself, a missing folder and no FILE are refused', async () => {
    const file = join(dir, 'small.db');
    expect(spawnSync(process.execPath, [MAIN_JS, 'migrate'], { env: { ...process.env, DB_URL: `sqlite:${file}` } }).status).toBe(0);
    const existing = join(dir, 'older-copy.db');
    writeFileSync(existing, 'an older copy');
    const replaced = await runBackup(`sqlite:${file}`, ['older-copy.db']); // relative to the working directory
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(openSqlite(existing, { readonly: true }).prepare('PRAGMA integrity_check').pluck().get()).toBe('ok');

    const itself = await runBackup(`sqlite:${file}`, [file]);
    expect(itself.code).toBe(1);
    expect(itself.stderr).toBe(`book-service: cannot back up: ${file} is the store itself: name another file\n`);
    const wal = await runBackup(`sqlite:${file}`, [`${file}-wal`]);
    expect(wal.stderr).toMatch(/is the store itself/);

    const noFolder = await runBackup(`sqlite:${file}`, [join(dir, 'nowhere', 'copy.db')]);
    expect(noFolder.code).toBe(1);
    expect(noFolder.stderr).toBe(`book-service: cannot back up: the folder ${join(dir, 'nowhere')} does not exist\n`);

    const noStore = await runBackup(`sqlite:${join(dir, 'absent.db')}`, ['copy.db']);
    expect(noStore.code).toBe(1);
    expect(noStore.stderr).toMatch(/^book-service: cannot back up: there is no SQLite store at .*absent\.db: check DB_URL\n$/);
    expect(existsSync(join(dir, 'absent.db'))).toBe(false);

    const noFile = await runBackup(`sqlite:${file}`, []);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/^book-service: backup needs the FILE to write the copy to\n\nUsage:/);
  });

  it('a server store: refused, naming its own tools', async () => {
    const run = await runBackup('postgres://postgres@127.0.0.1:5432/books', [join(dir, 'x.db')]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^book-service: cannot back up: backup copies the embedded SQLite store, .*pg_dump.*mariadb-dump/);
    expect(run.stderr).not.toContain('cannot start');
  });
});

/** pg_dump and pg_restore: from TEST_PG_BIN (the server's own version) when set, else from PATH. */
function pgTool(name: string): string {
  const bin = process.env.TEST_PG_BIN;
  return bin && existsSync(join(bin, name)) ? join(bin, name) : name;
}

interface RoundTrip {
  kind: 'postgres' | 'mysql';
  /** Writes the dump of `from` to `file` (the documented command). */
  dump(from: URL, file: string): void;
  /** Loads `file` into the empty database `into` (the documented command). */
  restore(into: URL, file: string): void;
}

const ROUND_TRIPS: RoundTrip[] = [
  {
    kind: 'postgres',
    dump: (from, file) => execFileSync(pgTool('pg_dump'), ['--format=custom', `--file=${file}`, from.toString()]),
    restore: (into, file) => execFileSync(pgTool('pg_restore'), ['--no-owner', '--exit-on-error', `--dbname=${into.toString()}`, file]),
  },
  {
    kind: 'mysql',
    dump: (from, file) =>
      execFileSync('mariadb-dump', ['--single-transaction', '--routines', '--triggers', '-h', from.hostname, '-P', from.port, '-u', from.username, `--result-file=${file}`, from.pathname.slice(1)]),
    restore: (into, file) => execFileSync('sh', ['-c', 'mariadb -h "$1" -P "$2" -u "$3" "$4" < "$5"', 'restore', into.hostname, into.port, into.username, into.pathname.slice(1), file]),
  },
];

for (const { kind, dump, restore } of ROUND_TRIPS) {
  describeIf(kind)(`${kind}: the dump and restore round trip`, () => {
    const stores: TestStore[] = [];
    afterAll(async () => {
      for (const store of stores) await store.drop();
    });

    it('a service on the restored database answers the same list, replays a stored Idempotency-Key answer, and migrates nothing again', async () => {
      const original = await createTestStore(kind);
      const restoredStore = await createTestStore(kind);
      stores.push(original, restoredStore);
      const service = await startService({ childProcess: true, dbUrl: original.url, env: { SECRET_TOKEN: TEST_SECRET, LOG_LEVEL: 'info' } });
      const client = new ApiClient(service.baseUrl);
      const token = await client.token();
      const created = [];
      for (const title of ['Dune', 'Emma', 'Ulysses', 'Beloved']) created.push(await client.createBook(token, { title, author: 'Someone', year: 1965 }));
      expect((await client.request('PUT', `/book/${created[1]!.id}`, { token, body: { year: 1815 } })).status).toBe(200);
      expect((await client.request('DELETE', `/book/${created[2]!.id}`, { token })).status).toBe(200);
      const keyed = await client.request('POST', '/book', { token, headers: { 'idempotency-key': 'backup-round-trip' }, body: { title: 'Kept', author: 'Key', year: 2000 } });
      expect(keyed.status).toBe(201);
      const before = await listOf(service);
      await service.stop();

      const file = join(dir, `${kind}.dump`);
      dump(new URL(original.url), file);
      restore(new URL(restoredStore.url), file);

      const restored = await startService({ childProcess: true, dbUrl: restoredStore.url, env: { SECRET_TOKEN: TEST_SECRET, LOG_LEVEL: 'info' } });
      expect(await listOf(restored)).toEqual(before);
      const restoredClient = new ApiClient(restored.baseUrl);
      const retried = await restoredClient.request('POST', '/book', {
        token: await restoredClient.token(),
        headers: { 'idempotency-key': 'backup-round-trip' },
        body: { title: 'Kept', author: 'Key', year: 2000 },
      });
      expect(retried.status).toBe(201);
      expect(retried.text).toBe(keyed.text);
      expect(await listOf(restored)).toHaveLength(before.length);
      // The new book gets an id after every restored one (the sequence came with the dump).
      const next = await restoredClient.createBook(await restoredClient.token(), { title: 'After', author: 'Restore', year: 2026 });
      expect(BigInt(next.id)).toBeGreaterThan(BigInt((keyed.body.data as { id: string | number }).id));
      await restored.stop();
      expect(restored.process.stdout()).not.toMatch(/migration applied/);
    });
  });
}
