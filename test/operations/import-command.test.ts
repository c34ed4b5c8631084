// `book-service import FILE` (docs/operations.md "Importing a collection") against a real
// service over real HTTP: the built entry point as a child process, the service in this one.
// Invalid rows are listed and skipped (exit 3), the rest imported once; an answer cut on its way
// back (a TCP proxy between them) is sent again and not applied twice; an import killed midway
// and run again finishes without creating a book twice; --dry-run sends nothing; a refused
// sign-in stops at once (exit 1); a file that is not one is a one-line error.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTcpProxy, type TcpProxy } from '../helpers/infra/tcp-proxy.js';
import { MAIN_JS } from '../helpers/service/main-process.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let directory: string;
beforeAll(() => {
  directory = mkdtempSync(join(tmpdir(), 'books-import-'));
});
afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

/** A started `node dist/main.js import …`, with `kill()` and its end. */
function startImport(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [MAIN_JS, 'import', ...args], {
    cwd: directory,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', AUTH_USERNAME: TEST_USERNAME, AUTH_PASSWORD: TEST_PASSWORD, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const ended = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { ended, kill: () => child.kill('SIGKILL'), stderr: () => stderr };
}

function runImport(args: string[], env: Record<string, string>): Promise<Run> {
  return startImport(args, env).ended;
}

/** A CSV of `count` books with unique titles (some quoted, with commas and quotes), and `invalid` rows at the given lines. */
function writeCsv(name: string, count: number, invalidAtLines: Map<number, string> = new Map()): string {
  const lines = ['title,author,year'];
  for (let index = 0; lines.length <= count + invalidAtLines.size; ) {
    const line = lines.length + 1;
    const invalid = invalidAtLines.get(line);
    if (invalid !== undefined) {
      lines.push(invalid);
      continue;
    }
    index += 1;
    lines.push(index % 7 === 0 ? `"${name} ${index}, the ""sequel""",Author ${index % 13},${1900 + (index % 120)}` : `${name} ${index},Author ${index % 13},${1900 + (index % 120)}`);
  }
  const file = join(directory, `${name}.csv`);
  writeFileSync(file, `${lines.join('\r\n')}\r\n`);
  return file;
}

describe('book-service import FILE', () => {
  const service = useService('sqlite', { LOG_LEVEL: 'warn' });
  let proxy: TcpProxy;
  let env: Record<string, string>;

  beforeAll(async () => {
    proxy = await startTcpProxy(Number(new URL(service.current.baseUrl).port));
    env = { SERVICE_URL: `http://127.0.0.1:${proxy.port}` };
  });
  afterAll(async () => {
    await proxy?.close();
  });

  /** How many stored books have each title starting with `prefix`. */
  async function titlesStored(prefix: string): Promise<Map<string, number>> {
    const token = await service.client.token();
    const list = await service.client.request('GET', '/books', { token });
    expect(list.status).toBe(200);
    const counts = new Map<string, number>();
    for (const { title } of list.body.data as { title: string }[]) if (title.startsWith(prefix)) counts.set(title, (counts.get(title) ?? 0) + 1);
    return counts;
  }

  function expectEachOnce(counts: Map<string, number>, expected: number) {
    expect(counts.size).toBe(expected);
    expect([...counts.values()].filter((count) => count !== 1)).toEqual([]);
  }

  it('imports the valid rows once, lists the invalid ones with their lines and exits 3; run again, it adds nothing', async () => {
    const invalid = new Map([
      [5, 'Empty title,,1999'.replace('Empty title', '')],
      [2_000, 'Bad year,Somebody,19x5'],
      [4_001, 'Far future,Somebody,10000'],
    ]);
    const file = writeCsv('Listed', 4_500, invalid);
    const first = await runImport([file], env);
    expect(first.code, first.stderr).toBe(3);
    expect(first.stderr).toContain('3 invalid rows, not imported:');
    expect(first.stderr).toContain('line 5: Title is required.');
    expect(first.stderr).toContain('line 2000: Year must be a whole number, such as 1965 or -300.');
    expect(first.stderr).toContain('line 4001: Year must be from -9999 to 9999.');
    expect(first.stdout).toMatch(/^.*Listed\.csv: imported 4,500 books in [\d.]+ s, [\d,]+ books\/s; 3 invalid rows skipped\n$/);
    const stored = await titlesStored('Listed ');
    expectEachOnce(stored, 4_500);
    expect(stored.has('Listed 7, the "sequel"')).toBe(true);

    const again = await runImport([file], env);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stdout).toContain('imported 4,500 books');
    expect(again.stdout).toContain('5 of the batches had been applied before');
    expectEachOnce(await titlesStored('Listed '), 4_500);
  });

  it('a batch applied whose answer was cut is sent again with its key, and applied once', async () => {
    const file = writeCsv('Cut', 3_000);
    proxy.cutAnswerOnceAfter('-2-of-3');
    const run = await runImport([file], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/batch 2: no answer .*; sending it again in 0\.5 s \(try 2\)/);
    expect(run.stdout).toContain('imported 3,000 books');
    expect(run.stdout).toContain('1 of the batches had been applied before');
    expectEachOnce(await titlesStored('Cut '), 3_000);
  });

  it('an import killed midway and run again finishes without creating a book twice', async () => {
    const file = writeCsv('Killed', 6_000);
    // The third batch is held on its way; the command is killed while it waits.
    proxy.stallOnceAt('-3-of-6', 2_000);
    const running = startImport([file], env);
    const started = Date.now();
    while ((await titlesStored('Killed ')).size < 2_000 && Date.now() - started < 20_000) await sleep(100);
    running.kill();
    await running.ended;
    await sleep(2_500); // the held batch reaches the service after all, without anyone waiting for it
    const again = await runImport([file], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('imported 6,000 books');
    expect(again.stdout).toMatch(/[2-3] of the batches had been applied before/);
    expectEachOnce(await titlesStored('Killed '), 6_000);
  });

  it('--dry-run reads the file and says what it would send, and sends nothing', async () => {
    const file = writeCsv('Dry', 1_200, new Map([[3, 'No year,Somebody,']]));
    const run = await runImport([file, '--dry-run'], env);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('line 3: Year is required.');
    expect(run.stdout).toContain(`Dry.csv: would import 1,200 books in 2 batches to http://127.0.0.1:${proxy.port}; nothing was sent (--dry-run)`);
    expect((await titlesStored('Dry ')).size).toBe(0);
  });

  it('a JSON file: the array GET /books answers with, ids ignored', async () => {
    const file = join(directory, 'books.json');
    writeFileSync(file, JSON.stringify([{ id: 1, title: 'Json one', author: 'A', year: 2001 }, { id: 1, title: 'Json two', author: 'B', year: -300 }]));
    const run = await runImport([file], env);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('imported 2 books');
    expectEachOnce(await titlesStored('Json '), 2);
  });

  it('a refused sign-in stops at the first batch with exit 1, naming AUTH_USERNAME, and writes nothing', async () => {
    const file = writeCsv('Refused', 10);
    const started = Date.now();
    const run = await runImport([file], { ...env, AUTH_PASSWORD: 'not the password' });
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^book-service: cannot import: stopped at batch 1 of 1 after 0 books \(401 signing in as AUTH_USERNAME: Invalid credentials\); run the same command again/m);
    expect(run.stderr).not.toContain('not the password');
    expect(Date.now() - started).toBeLessThan(10_000); // not sent again and again
    expect((await titlesStored('Refused ')).size).toBe(0);
  });

  it('a file that cannot be read, or is no file of books, is one line and exit 1; a mistake on the command line exit 2', async () => {
    const missing = await runImport([join(directory, 'missing.csv')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`book-service: cannot import: cannot read ${join(directory, 'missing.csv')}: ENOENT\n`);
    const headless = join(directory, 'headless.csv');
    writeFileSync(headless, 'name,writer,year\nA,B,2000\n');
    const noColumns = await runImport([headless], env);
    expect(noColumns.code).toBe(1);
    expect(noColumns.stderr).toBe(
      `book-service: cannot import: ${headless}: The CSV file's first line names no title, author column: it must name the columns title, author and year.\n`,
    );
    const noFile = await runImport([], env);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toMatch(/^book-service: import needs the FILE of books to import \(JSON or CSV\)\n/);
    const badUrl = await runImport([headless], { SERVICE_URL: 'ftp://books.example' });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toContain('SERVICE_URL must be the service');
  });
});
