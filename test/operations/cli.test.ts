// The command line of the built entry point (README "Quick start", docs/operations.md):
// `--help`, `--version`, `migrate` (apply the migrations, then exit), and command-line mistakes.
// Runs dist/main.js as a child process in an empty working directory with a clean environment.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqlite } from '../helpers/stores/sqlite.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAIN_JS } from '../helpers/service/main-process.js';
import { TEST_SECRET } from '../helpers/client/test-account.js';

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

let cwd: string;

beforeAll(() => {
  cwd = mkdtempSync(join(tmpdir(), 'books-cli-'));
});
afterAll(() => {
  if (cwd) rmSync(cwd, { recursive: true, force: true });
});

/** `node dist/main.js ...args` with only PATH, HOME and `env`; killed after 20 s (a command that serves would hang). */
function cli(args: string[], env: Record<string, string> = {}): Run {
  const result = spawnSync(process.execPath, [MAIN_JS, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (result.error) throw result.error;
  return { code: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr };
}

function tables(file: string): string[] {
  const db = openSqlite(file, { readonly: true, fileMustExist: true });
  try {
    return (db.prepare("select name from sqlite_master where type = 'table' order by name").all() as Array<{ name: string }>).map(
      (row) => row.name,
    );
  } finally {
    db.close();
  }
}

describe('node dist/main.js --help / --version', () => {
  it('--help prints the usage on stdout and exits 0', () => {
    const run = cli(['--help']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/usage/i);
    for (const word of ['migrate', '--help', '--version', 'SECRET_TOKEN', 'DB_URL']) expect(run.stdout).toContain(word);
    expect(run.stderr).toBe('');
  });

  it('--help names every setting that .env.example documents', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const names = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((match) => match[1]);
    expect(names.length).toBeGreaterThan(10);
    const run = cli(['--help']);
    for (const name of names) expect(run.stdout, name).toContain(name as string);
  });

  it('every setting src/config.ts reads is in .env.example, --help and the README configuration table (the internal switches: docs/operations.md\'s)', () => {
    const source = readFileSync(new URL('../../src/config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|env, '([A-Z][A-Z0-9_]+)'/g)].map((match) => match[1] ?? match[2]));
    expect(read.size).toBeGreaterThan(15);
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const switches = operations.slice(operations.indexOf('## Internal switches'), operations.indexOf('## Speed paths'));
    const help = cli(['--help']).stdout;
    for (const name of read) {
      expect(example, `.env.example: ${name}`).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
      expect(help, `--help: ${name}`).toContain(name as string);
      expect(readme + switches, `README or docs/operations.md "Internal switches": ${name}`).toContain(`| \`${name}\` |`);
    }
  });

  it('every OTEL_* variable src/tracing/tracing-config.ts reads is in .env.example, --help and the Traces section of docs/operations.md', () => {
    const source = readFileSync(new URL('../../src/tracing/tracing-config.ts', import.meta.url), 'utf8');
    const read = new Set([...source.matchAll(/'(OTEL_[A-Z0-9_]+)'|env\.(OTEL_[A-Z0-9_]+)/g)].map((match) => match[1] ?? match[2]));
    // Read as OTEL_EXPORTER_OTLP_<name> and OTEL_EXPORTER_OTLP_TRACES_<name> (signalOrGeneral).
    for (const [, name] of source.matchAll(/signalOrGeneral\(env, '([A-Z]+)'\)/g)) read.add(`OTEL_EXPORTER_OTLP_${name}`).add(`OTEL_EXPORTER_OTLP_TRACES_${name}`);
    expect(read.size).toBeGreaterThan(20);
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    const operations = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
    const traces = operations.slice(operations.indexOf('## Traces'), operations.indexOf('## Shutdown'));
    const help = cli(['--help']).stdout;
    for (const name of read) {
      expect(example, `.env.example: ${name}`).toMatch(new RegExp(`^#?\\s*${name}=`, 'm'));
      expect(help, `--help: ${name}`).toMatch(new RegExp(`\\b${name}\\b`));
      expect(traces, `docs/operations.md: ${name}`).toContain(`\`${name}\``);
    }
  });

  it('--version prints the package.json version and exits 0', () => {
    const run = cli(['--version']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(PACKAGE_VERSION);
    expect(run.stderr).toBe('');
  });

  it('--help and --version need no configuration (no SECRET_TOKEN, no store touched)', () => {
    for (const flag of ['--help', '--version']) {
      const run = cli([flag], { DB_URL: `sqlite:${join(cwd, 'never', 'created.db')}` });
      expect(run.code, flag).toBe(0);
    }
    expect(existsSync(join(cwd, 'never'))).toBe(false);
    expect(existsSync(join(cwd, 'data'))).toBe(false);
  });
});

describe('node dist/main.js migrate', () => {
  it('creates the schema in DB_URL=sqlite:<tmp>/…/x.db (directory included) and exits 0', () => {
    const file = join(cwd, 'deploy', 'store', 'x.db');
    const run = cli(['migrate'], { DB_URL: `sqlite:${file}`, SECRET_TOKEN: TEST_SECRET });
    expect(run.signal, 'migrate did not exit by itself').toBeNull();
    expect(run.code, run.stderr).toBe(0);
    expect(tables(file)).toContain('books');

    const db = openSqlite(file, { readonly: true });
    try {
      const columns = (db.prepare('pragma table_info(books)').all() as Array<{ name: string }>).map((column) => column.name);
      expect(columns.sort()).toEqual(['author', 'id', 'title', 'version', 'year']);
    } finally {
      db.close();
    }
  });

  it('a second migrate is a no-op that keeps the data, and exits 0', () => {
    const file = join(cwd, 'again.db');
    const env = { DB_URL: `sqlite:${file}`, SECRET_TOKEN: TEST_SECRET };
    expect(cli(['migrate'], env).code).toBe(0);
    const db = openSqlite(file);
    db.prepare('insert into books (title, author, year) values (?, ?, ?)').run('Dune', 'Frank Herbert', 1965);
    db.close();

    const run = cli(['migrate'], env);
    expect(run.code, run.stderr).toBe(0);
    const check = openSqlite(file, { readonly: true });
    try {
      expect(check.prepare('select title, author, year from books').all()).toEqual([{ title: 'Dune', author: 'Frank Herbert', year: 1965 }]);
    } finally {
      check.close();
    }
  });
});

describe('command-line mistakes: one line naming the mistake, then the usage, exit code 2', () => {
  it.each([
    ['an unknown command', ['frobnicate'], 'unknown command frobnicate'],
    ['an extra argument', ['migrate', 'now'], 'unexpected argument now'],
    ['an unknown option', ['--frobnicate'], 'unknown option --frobnicate'],
    ['an unknown short option', ['-x'], 'unknown option -x'],
    ['a setting given as an option', ['--port', '9000'], 'unknown option --port: settings are environment variables, as in PORT=… npm start (README "Configuration")'],
    ['a setting with dashes, given with =', ['--db-url=sqlite:x.db'], 'unknown option --db-url: settings are environment variables, as in DB_URL=… npm start (README "Configuration")'],
    ['a value given to a flag', ['--help=yes'], 'option --help takes no value'],
    ['import without its file', ['import'], 'import needs the FILE of books to import (JSON or CSV)'],
    ['import with two files', ['import', 'a.csv', 'b.csv'], 'unexpected argument b.csv'],
    ['--dry-run with another command', ['migrate', '--dry-run'], 'option --dry-run is for import only'],
    ['a setting given as an option to import', ['import', 'a.csv', '--service-url=http://x'], 'unknown option --service-url: settings are environment variables, as in SERVICE_URL=… npm start (README "Configuration")'],
  ])('%s', (_name, args, message) => {
    const run = cli(args, { DB_URL: `sqlite:${join(cwd, 'unknown', 'x.db')}`, SECRET_TOKEN: TEST_SECRET });
    expect(run.signal, 'the command did not exit by itself').toBeNull();
    expect(run.code).toBe(2);
    const [first, blank, ...usage] = run.stderr.split('\n');
    expect(first).toBe(`book-service: ${message}`);
    expect(blank).toBe('');
    expect(usage[0]).toBe('Usage:');
    expect(usage.join('\n')).toContain('node dist/main.js migrate');
    expect(run.stdout).toBe('');
    expect(existsSync(join(cwd, 'unknown'))).toBe(false);
  });
});
