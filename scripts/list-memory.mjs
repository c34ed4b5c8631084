#!/usr/bin/env node
// Peak memory of GET /books over a large collection: `node scripts/list-memory.mjs [count]`.
// Seeds COUNT books (default 100,000) into a fresh SQLite store (and a fresh PostgreSQL
// database when TEST_POSTGRES_URL or the local server answers), starts the built service,
// reads the whole list a few times, and prints the growth of peak RSS (VmHWM) over the
// process's RSS before the first list. Run `npm run build` first.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';

const COUNT = Number(process.argv[2] ?? 100_000);
const MAIN = fileURLToPath(new URL('../dist/main.js', import.meta.url));
const SECRET = randomBytes(32).toString('hex');
const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)[1]);
  return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
}

function get(port, path, token) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const request = http.get({ host: '127.0.0.1', port, path, headers: token ? { authorization: token } : {} }, (response) => {
      let bytes = 0;
      let head = '';
      response.on('data', (chunk) => {
        if (head.length < 64) head += chunk.toString();
        bytes += chunk.length;
      });
      response.on('end', () => resolve({ status: response.statusCode, bytes, head, ms: performance.now() - started }));
    });
    request.on('error', reject);
  });
}

async function measure(label, dbUrl) {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const env = { PATH: process.env.PATH, NODE_OPTIONS: process.env.NODE_OPTIONS ?? "", SECRET_TOKEN: SECRET, DB_URL: dbUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, [MAIN], { env, stdio: 'ignore' });
  try {
    for (let i = 0; i < 100; i++) {
      try {
        await get(port, '/healthz');
        break;
      } catch {
        await sleep(100);
      }
    }
    const login = await new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, path: '/token', method: 'POST' }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve(JSON.parse(body).data.token));
      });
      request.on('error', reject);
      request.end(JSON.stringify({ username: 'admin', password: 'password' }));
    });
    await get(port, '/book/1', login); // warm the route
    const before = memory(child.pid);
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await get(port, '/books', login));
    const after = memory(child.pid);
    const ok = runs.every((run) => run.status === 200 && run.head.startsWith('{"status":200'));
    console.log(
      `${label}: ${COUNT} books, ${(runs[0].bytes / 1024 / 1024).toFixed(1)} MiB of JSON, ` +
        `list ${runs.map((run) => run.ms.toFixed(0)).join('/')} ms, RSS before ${before.rss.toFixed(1)} MiB, ` +
        `peak ${after.peak.toFixed(1)} MiB, growth ${(after.peak - before.rss).toFixed(1)} MiB${ok ? '' : ' (BAD ANSWER)'}`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

function seed(insertMany) {
  const rows = [];
  for (let i = 0; i < COUNT; i++) rows.push([`Title number ${i} of the big collection`, `Author ${i % 997}`, (i % 4000) - 2000]);
  return insertMany(rows);
}

const dir = mkdtempSync(join(tmpdir(), 'list-memory-'));
try {
  const file = join(dir, 'books.db');
  await new Promise((resolve) => spawn(process.execPath, [MAIN, 'migrate'], { env: { PATH: process.env.PATH, DB_URL: `sqlite:${file}`, LOG_LEVEL: 'warn' }, stdio: 'inherit' }).on('exit', resolve));
  const db = new Database(file);
  const insert = db.prepare('insert into books (title, author, year) values (?, ?, ?)');
  seed((rows) => db.transaction(() => rows.forEach((row) => insert.run(...row)))());
  db.close();
  await measure('SQLite', `sqlite:${file}`);

  const name = `list_memory_${process.pid}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let reachable = true;
  await admin.connect().catch(() => (reachable = false));
  if (reachable) {
    await admin.query(`create database ${name}`);
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    try {
      await new Promise((resolve) => spawn(process.execPath, [MAIN, 'migrate'], { env: { PATH: process.env.PATH, DB_URL: url.toString(), LOG_LEVEL: 'warn' }, stdio: 'inherit' }).on('exit', resolve));
      const client = new pg.Client({ connectionString: url.toString() });
      await client.connect();
      await client.query(
        `insert into books (title, author, year) select 'Title number ' || i || ' of the big collection', 'Author ' || (i % 997), (i % 4000) - 2000 from generate_series(0, $1 - 1) as i`,
        [COUNT],
      );
      await client.end();
      await measure('PostgreSQL', url.toString());
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
  } else {
    console.log(`PostgreSQL at ${ADMIN_URL.replace(/:[^:@/]*@/, ':***@')} unreachable: skipped`);
  }
  await admin.end().catch(() => undefined);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
