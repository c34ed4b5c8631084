// The service's SQLite connection settings (src/store/sqlite/connection.ts), read back from the
// connection itself: WAL, synchronous=FULL, the busy timeout, and SQLite's own 2 MiB page cache
// instead of the 16 MiB better-sqlite3 builds SQLite with (it held 16 MiB more RSS once writes
// to the Idempotency-Key index had filled it: docs/benchmarks-changes.md).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CompiledQuery } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { openSqliteConnection } from '../../src/store/sqlite/connection.js';

const dir = mkdtempSync(join(tmpdir(), 'sqlite-connection-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('a store file is opened with WAL, synchronous=FULL, a busy timeout and a 2 MiB page cache', () => {
  const connection = openSqliteConnection(join(dir, 'books.db'), { description: 'test' });
  const pragma = (name: string) => Object.values(connection.execute(CompiledQuery.raw(`pragma ${name}`)).rows[0] as object)[0];
  expect(pragma('journal_mode')).toBe('wal');
  expect(Number(pragma('synchronous'))).toBe(2); // FULL
  expect(Number(pragma('busy_timeout'))).toBeGreaterThan(0);
  expect(Number(pragma('cache_size'))).toBe(-2000); // KiB; better-sqlite3's build default is -16000
});
