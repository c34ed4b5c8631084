#!/usr/bin/env node
// Benchmark harness: `npm run bench` (builds, then runs this file).
//
// Starts the built service (`node dist/main.js`, default settings except SECRET_TOKEN, PORT and
// DB_URL) on a fresh SQLite store and, when reachable, a fresh PostgreSQL database; next to it a
// bare node:http server answering a fixed book envelope as the baseline. wrk (1 thread,
// 64 connections, scripts/bench/scenario.lua) drives each scenario for BENCH_DURATION seconds
// after a short warm-up, for BENCH_ROUNDS rounds taken round-robin over all scenarios; the
// medians are reported. Then GET /books at 10,000 books, peak RSS, and startup time.
// Writes bench-results/latest.json and docs/benchmarks.md; prints a table.
//
// Go/Gin reference (bench/go-gin/main.go, a plain Go + Gin + database/sql implementation of the
// same API, the reference the service's speed is compared with): built into a temp dir in
// GOPATH mode from Debian packages (installed with apt-get when missing and running as root),
// started per store on its own fresh store (SQLite file in the temp dir, a fresh PostgreSQL
// database), seeded with the same books through its API, and driven by the same scenarios in the
// same rounds, each of its runs right after the service's run of the same scenario. Reported
// next to the service as "vs Go/Gin" (service req/s / Go/Gin req/s). Skipped, with one line,
// when it cannot be built.
//
// Environment:
//   BENCH_ROUNDS        rounds (default 3)
//   BENCH_DURATION      seconds per measured run (default 10)
//   BENCH_WARMUP        seconds of warm-up before each run (default 2; 0 = none)
//   BENCH_STORES        stores to run (default sqlite,postgres)
//   BENCH_WORKERS       run the service with WORKERS=N (node:cluster) instead of its default 1;
//                       the figures then go to docs/benchmarks-workers-N.md and
//                       bench-results/latest-workers-N.json, so the default run's page stays
//   BENCH_TOOL          wrk (default) or autocannon (fallback, used when wrk is missing)
//   BENCH_GO            Go/Gin reference: unset = when it can be built, 0 = off,
//                       1 = required (a failure to build or start it is fatal)
//   GIN_LOGGER          1 = the Go/Gin reference logs every request (gin's logger) to its log file
//   BENCH_KEEP_LOGS     1 = keep the full service logs (default: only lines that are not 2xx
//                       "request completed" at info level are kept)
//   TEST_POSTGRES_URL   PostgreSQL server for the fresh database
//                       (default postgres://postgres@127.0.0.1:5432/postgres)
//
// Internal: `node scripts/bench.mjs --baseline-server PORT` is the baseline server process.
import { Buffer } from 'node:buffer';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { URL, fileURLToPath } from 'node:url';

const BASELINE_BODY = JSON.stringify({
  status: 200,
  message: 'Book retrieved successfully',
  data: { id: 1, title: 'The Pragmatic Programmer', author: 'Andrew Hunt', year: 1999 },
});

// ---------------------------------------------------------------------------------------------
// Baseline: the cheapest possible JSON answer from node:http, in its own process.

function runBaselineServer(port) {
  const body = Buffer.from(BASELINE_BODY);
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
  http
    .createServer((request, response) => {
      request.resume();
      response.writeHead(200, headers);
      response.end(body);
    })
    .listen(port, '127.0.0.1');
}

// ---------------------------------------------------------------------------------------------
// Settings

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN_JS = join(ROOT, 'dist', 'main.js');
const LUA_SCRIPT = join(ROOT, 'scripts', 'bench', 'scenario.lua');
const RESULTS_DIR = join(ROOT, 'bench-results');
const LOG_DIR = join(RESULTS_DIR, 'logs');
const DOCS_FILE = join(ROOT, 'docs', 'benchmarks.md');
const GO_DIR = join(ROOT, 'bench', 'go-gin');
/** Debian's Go sources, for building in GOPATH mode offline. */
const GO_SYSTEM_GOPATH = '/usr/share/gocode';
const GO_DEBIAN_PACKAGES = [
  'golang-go', 'golang-github-gin-gonic-gin-dev', 'golang-github-mattn-go-sqlite3-dev',
  'golang-github-lib-pq-dev', 'golang-github-golang-jwt-jwt-dev',
];
const GO_IMPORTS = ['github.com/gin-gonic/gin', 'github.com/mattn/go-sqlite3', 'github.com/lib/pq', 'github.com/golang-jwt/jwt'];

const THREADS = 1;
const CONNECTIONS = 64;
const SEED_BOOKS = 100;
const LARGE_BOOKS = 10_000;
const STARTUP_SAMPLES = 5;
const SEQUENTIAL_SAMPLES = 20;
/** wrk's default 2 s timeout would drop (not time) the slowest 10,000-book answers. */
const LARGE_LIST_TIMEOUT_S = 30;
const USERNAME = 'admin';
const PASSWORD = 'password';
const BOOK_BODY = JSON.stringify({ title: 'Benchmark Book', author: 'Bench Author', year: 2024 });
const CREDENTIALS_BODY = JSON.stringify({ username: USERNAME, password: PASSWORD });
const POSTGRES_ADMIN_URL = process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/** Service settings stripped from the inherited environment, so the service runs on its defaults. */
const SERVICE_SETTINGS = [
  'SECRET_TOKEN', 'DB_URL', 'PORT', 'HOST', 'AUTH_USERNAME', 'AUTH_PASSWORD', 'LOG_LEVEL',
  'LOGIN_RATE_LIMIT', 'DB_CONNECT_TIMEOUT', 'DB_QUERY_TIMEOUT', 'REQUEST_TIMEOUT', 'DB_POOL_MAX',
  'CORS_ORIGINS', 'METRICS', 'WORKERS', 'NODE_OPTIONS',
];

function intSetting(name, fallback, min) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new UsageError(`${name} must be an integer >= ${min}; got "${raw}"`);
  }
  return value;
}

class UsageError extends Error {}

// ---------------------------------------------------------------------------------------------
// Children and cleanup: every child is killed, the database dropped and temp dirs removed, on
// success, on failure and on Ctrl-C.

const children = new Set();
const cleanups = [];
let aborted = false;
let cleaning;

function checkAborted() {
  if (aborted) throw new Error('interrupted');
}

function track(child) {
  children.add(child);
  child.exited = new Promise((resolvePromise) => {
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolvePromise({ code, signal });
    });
    child.once('error', (error) => {
      children.delete(child);
      resolvePromise({ code: null, signal: null, error });
    });
  });
  return child;
}

function isRunning(child) {
  return child.exitCode === null && child.signalCode === null && children.has(child);
}

async function stopChild(child, graceMs = 10_000) {
  if (!isRunning(child)) return child.exited;
  child.stopping = true;
  child.kill('SIGTERM');
  const timer = sleep(graceMs).then(() => 'timeout');
  if ((await Promise.race([child.exited, timer])) === 'timeout') {
    child.kill('SIGKILL');
  }
  return child.exited;
}

function cleanup() {
  cleaning ??= (async () => {
    await Promise.all([...children].map((child) => stopChild(child, 5_000)));
    for (const task of cleanups.reverse()) {
      try {
        await task();
      } catch (error) {
        log(`cleanup: ${error.message}`);
      }
    }
  })();
  return cleaning;
}

function handleSignals() {
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (aborted) return;
      aborted = true;
      log(`\n${signal}: stopping children, dropping databases, removing temp dirs…`);
      cleanup().finally(() => process.exit(130));
    });
  }
  process.on('exit', () => {
    for (const child of children) child.kill('SIGKILL');
  });
}

function log(message) {
  process.stderr.write(`${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// Small helpers

function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/** One HTTP request; resolves with status and parsed JSON body (or raw text). */
function request(port, method, path, { token, body, agent = false, timeoutMs = 60_000 } = {}) {
  return new Promise((resolvePromise, reject) => {
    const headers = {};
    if (token) headers.authorization = token;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolvePromise({ status: res.statusCode, json, text });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function getToken(port) {
  const response = await request(port, 'POST', '/token', { body: CREDENTIALS_BODY });
  const token = response.json?.data?.token;
  if (response.status !== 200 || typeof token !== 'string') {
    throw new Error(`POST /token answered ${response.status}: ${response.text.slice(0, 200)}`);
  }
  return token;
}

function descendants(pid) {
  const found = [];
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    let children;
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter(Boolean).map(Number)) found.push(child, ...descendants(child));
  }
  return found;
}

/**
 * Peak RSS (VmHWM) of the service process; should it have forked (WORKERS > 1), the peaks of
 * its descendants are added, an upper bound of the peak of the whole tree.
 */
function readPeakRss(pid) {
  let kib = 0;
  let processes = 0;
  for (const each of [pid, ...descendants(pid)]) {
    try {
      const status = readFileSync(`/proc/${each}/status`, 'utf8');
      kib += Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      processes += 1;
    } catch {
      // gone meanwhile
    }
  }
  return { peakRssMiB: processes ? kib / 1024 : null, processes };
}

function redactUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

function commandExists(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

function tailOf(file, lines = 15) {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------
// Processes under test

function childEnv(extra) {
  const env = { ...process.env };
  for (const name of SERVICE_SETTINGS) delete env[name];
  return { ...env, ...extra };
}

/**
 * `node dist/main.js`, as `npm start` runs it, from a scratch working directory (so no stray
 * .env is read); stdout/stderr appended to the store's log file.
 */
/** BENCH_WORKERS: the service's WORKERS setting for this run (undefined = its default). */
let serviceWorkers;

function spawnService(store, port, workDir) {
  checkAborted();
  const fd = openSync(store.logFile, 'a');
  try {
    const child = spawn(process.execPath, [MAIN_JS], {
      cwd: workDir,
      env: childEnv({
        SECRET_TOKEN: store.secret,
        PORT: String(port),
        DB_URL: store.url,
        ...(serviceWorkers === undefined ? {} : { WORKERS: String(serviceWorkers) }),
      }),
      stdio: ['ignore', fd, fd],
    });
    return track(child);
  } finally {
    closeSync(fd);
  }
}

function spawnBaseline(port) {
  checkAborted();
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--baseline-server', String(port)], {
    env: childEnv({}),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return track(child);
}

/** Polls until the process gives a 200; returns ms since `startedAt`. */
async function waitForAnswer(child, port, startedAt, { method, path, body, what, logFile }) {
  const deadline = startedAt + 60_000;
  for (;;) {
    checkAborted();
    if (!isRunning(child)) {
      const { code, signal } = await child.exited;
      throw new Error(`${what} exited (${signal ?? code}) before answering${logFile ? `:\n${tailOf(logFile)}` : ''}`);
    }
    try {
      const response = await request(port, method, path, { body, timeoutMs: 5_000 });
      if (response.status === 200) return performance.now() - startedAt;
    } catch {
      // not listening yet
    }
    if (performance.now() > deadline) throw new Error(`${what} gave no 200 within 60 s`);
    await sleep(5);
  }
}

/** A service that exited while the bench still needed it: say so, with its last own words. */
function assertAlive(child, store) {
  if (isRunning(child) || child.stopping) return;
  const ownLines = tailOf(store.logFile, 2000)
    .split('\n')
    .filter((line) => line.includes(`"pid":${child.pid},`) && !line.includes('"msg":"request completed"'))
    .slice(-5)
    .join('\n');
  throw new Error(
    `the ${store.label} service (pid ${child.pid}) exited (${child.signalCode ?? `code ${child.exitCode}`}) ` +
      `although the bench did not stop it; its last log lines:\n${ownLines}`,
  );
}

async function startService(store, workDir) {
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawnService(store, port, workDir);
  const ms = await waitForAnswer(child, port, startedAt, {
    method: 'POST',
    path: '/token',
    body: CREDENTIALS_BODY,
    what: `the service (${store.label})`,
    logFile: store.logFile,
  });
  return { child, port, startupMs: ms };
}

// ---------------------------------------------------------------------------------------------
// Stores

async function withPostgres(url, work) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function createSqliteStore(tempDir, dirName = 'sqlite') {
  const dir = join(tempDir, dirName);
  mkdirSync(dir);
  const file = join(dir, 'books.db');
  const { default: Database } = await import('better-sqlite3');
  const withDb = (work) => {
    const db = new Database(file);
    try {
      db.pragma('busy_timeout = 10000');
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    kind: 'sqlite',
    label: 'SQLite',
    url: `sqlite:${file}`,
    description: `SQLite file in a temp dir (service defaults: WAL, synchronous=FULL); better-sqlite3 ${packageVersion('better-sqlite3')}`,
    async resetTo(maxId) {
      return withDb((db) => {
        db.prepare('delete from books where id > ?').run(maxId);
        return Number(db.prepare('select count(*) as n from books').pluck().get());
      });
    },
    /** Only while the service is stopped: one transaction up to `total` rows. */
    async fillTo(total) {
      return withDb((db) => {
        const have = Number(db.prepare('select count(*) from books').pluck().get());
        const insert = db.prepare('insert into books (title, author, year) values (?, ?, ?)');
        db.transaction(() => {
          for (let i = have + 1; i <= total; i += 1) insert.run(...seedBook(i));
        })();
        return Number(db.prepare('select count(*) from books').pluck().get());
      });
    },
    async drop() {},
  };
}

async function createPostgresStore() {
  const name = `books_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const version = await withPostgres(POSTGRES_ADMIN_URL, async (client) => {
    const { rows } = await client.query('show server_version');
    await client.query(`create database ${name}`);
    return rows[0].server_version;
  });
  const adminUrl = new URL(POSTGRES_ADMIN_URL);
  adminUrl.pathname = `/${name}`;
  const url = adminUrl.toString();
  const store = {
    kind: 'postgres',
    label: 'PostgreSQL',
    url,
    database: name,
    description: `PostgreSQL ${version} on ${adminUrl.host} (a fresh database per run, dropped afterwards); pg ${packageVersion('pg')}`,
    async resetTo(maxId) {
      return withPostgres(url, async (client) => {
        await client.query('delete from books where id > $1', [maxId]);
        const { rows } = await client.query('select count(*)::int as n from books');
        return rows[0].n;
      });
    },
    async fillTo(total) {
      return withPostgres(url, async (client) => {
        const { rows } = await client.query('select count(*)::int as n from books');
        await client.query(
          `insert into books (title, author, year)
           select 'Benchmark Book ' || g, 'Author ' || (g % 97), 1900 + (g % 125)
           from generate_series($1::int, $2::int) as g`,
          [rows[0].n + 1, total],
        );
        const after = await client.query('select count(*)::int as n from books');
        return after.rows[0].n;
      });
    },
    async drop() {
      await withPostgres(POSTGRES_ADMIN_URL, async (client) => {
        try {
          await client.query(`drop database if exists ${name} with (force)`);
        } catch {
          // PostgreSQL < 13: no WITH (FORCE)
          await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
          await client.query(`drop database if exists ${name}`);
        }
      });
    },
  };
  cleanups.push(() => store.drop());
  return store;
}

function seedBook(i) {
  return [`Benchmark Book ${i}`, `Author ${i % 97}`, 1900 + (i % 125)];
}

async function seedViaApi(port, token, count) {
  const ids = [];
  let next = 1;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next <= count) {
          const i = next++;
          const [title, author, year] = seedBook(i);
          const response = await request(port, 'POST', '/book', {
            token,
            agent,
            body: JSON.stringify({ title, author, year }),
          });
          if (response.status !== 201) {
            throw new Error(`seeding: POST /book answered ${response.status}: ${response.text.slice(0, 200)}`);
          }
          ids.push(Number(response.json.data.id));
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return ids.sort((a, b) => a - b);
}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

// ---------------------------------------------------------------------------------------------
// Load generator: wrk (preferred) or autocannon via npx

function chooseTool() {
  const wanted = (process.env.BENCH_TOOL || 'wrk').toLowerCase();
  if (wanted === 'autocannon') return { name: 'autocannon', version: 'autocannon (npx)' };
  if (wanted !== 'wrk') throw new UsageError(`BENCH_TOOL must be wrk or autocannon; got "${wanted}"`);
  if (!commandExists('wrk') && canAptInstall()) {
    log('wrk is not installed: installing it with apt-get…');
    aptInstall(['wrk']);
  }
  if (commandExists('wrk')) {
    const out = spawnSync('wrk', ['-v'], { encoding: 'utf8' });
    const version = /wrk\s+\S+/.exec(`${out.stdout}${out.stderr}`)?.[0] ?? 'wrk';
    return { name: 'wrk', version };
  }
  log('wrk is not available (and cannot be installed here): falling back to autocannon via npx');
  return { name: 'autocannon', version: 'autocannon (npx)' };
}

function canAptInstall() {
  return process.getuid?.() === 0 && commandExists('apt-get');
}

/** apt-get install; once more after apt-get update if the first attempt fails. */
function aptInstall(packages) {
  const install = () =>
    spawnSync('apt-get', ['install', '-y', '--no-install-recommends', ...packages], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  if (install()) return true;
  spawnSync('apt-get', ['update'], { stdio: ['ignore', 'inherit', 'inherit'] });
  return install();
}

function runProcess(command, args, env, { cwd } = {}) {
  checkAborted();
  return new Promise((resolvePromise, reject) => {
    const child = track(spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] }));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.exited.then(({ code, signal, error }) => {
      if (error) return reject(error);
      if (aborted) return reject(new Error('interrupted'));
      if (code !== 0) return reject(new Error(`${command} exited with ${signal ?? code}: ${stderr || stdout}`));
      resolvePromise({ stdout, stderr });
    });
  });
}

/** One load run; returns { rps, p50Ms, p99Ms, requests, non2xx, socketErrors, errors, raw }. */
async function runLoad(tool, { port, method = 'GET', path = '/', paths, token, body, duration, timeoutS }) {
  if (tool.name === 'wrk') {
    const args = [`-t${THREADS}`, `-c${CONNECTIONS}`, `-d${duration}s`, '--latency'];
    if (timeoutS) args.push('--timeout', `${timeoutS}s`);
    args.push('-s', LUA_SCRIPT, `http://127.0.0.1:${port}${path}`);
    const env = {
      ...process.env,
      BENCH_METHOD: method,
      BENCH_TOKEN: token ?? '',
      BENCH_BODY: body ?? '',
      BENCH_PATHS: paths ? paths.join(',') : '',
    };
    const { stdout } = await runProcess('wrk', args, env);
    return parseWrk(stdout);
  }
  // autocannon: no per-request paths from the command line, so a cycling scenario uses its first path.
  const args = ['--yes', 'autocannon', '-j', '-c', String(CONNECTIONS), '-d', String(duration), '-m', method];
  if (timeoutS) args.push('-t', String(timeoutS));
  if (token) args.push('-H', `Authorization=${token}`);
  if (body) args.push('-H', 'Content-Type=application/json', '-b', body);
  args.push(`http://127.0.0.1:${port}${paths ? paths[0] : path}`);
  const { stdout } = await runProcess('npx', args, process.env);
  const result = JSON.parse(stdout.slice(stdout.indexOf('{')));
  const socketErrors = { connect: 0, read: 0, write: 0, timeout: result.timeouts ?? 0, other: result.errors ?? 0 };
  const non2xx = result.non2xx ?? 0;
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx,
    socketErrors,
    errors: non2xx + socketErrors.timeout + socketErrors.other,
    raw: stdout,
  };
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

function parseDuration(text) {
  const match = /^([\d.]+)(us|ms|s|m|h)$/.exec(text);
  return match ? Number(match[1]) * UNIT_MS[match[2]] : null;
}

function parseWrk(output) {
  const percentile = (p) => {
    const match = new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(output);
    return match ? parseDuration(match[1]) : null;
  };
  const rps = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(output)?.[1]);
  const requests = Number(/^\s*(\d+) requests in /m.exec(output)?.[1] ?? 0);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const socketErrors = {
    connect: Number(socket?.[1] ?? 0),
    read: Number(socket?.[2] ?? 0),
    write: Number(socket?.[3] ?? 0),
    timeout: Number(socket?.[4] ?? 0),
  };
  if (!Number.isFinite(rps)) throw new Error(`cannot parse wrk output:\n${output}`);
  const errors = non2xx + socketErrors.connect + socketErrors.read + socketErrors.write + socketErrors.timeout;
  return { rps, p50Ms: percentile(50), p99Ms: percentile(99), requests, non2xx, socketErrors, errors, raw: output };
}

// ---------------------------------------------------------------------------------------------
// Service log: counts per level and per status, then shrunk to what is worth keeping.

async function summariseLog(file, keepAll) {
  const summary = { lines: 0, byLevel: {}, responses: {}, notable: [] };
  if (!existsSync(file)) return summary;
  const notable = new Map();
  const kept = keepAll ? null : createWriteStream(`${file}.tmp`);
  const levelNames = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  for await (const line of lines) {
    if (line === '') continue;
    summary.lines += 1;
    const levelNumber = /"level":(\d+)/.exec(line)?.[1];
    const level = levelNames[levelNumber] ?? (levelNumber ? `level ${levelNumber}` : 'not JSON');
    summary.byLevel[level] = (summary.byLevel[level] ?? 0) + 1;
    const status = Number(/"status":(\d+)/.exec(line)?.[1]);
    const isRequestLine = line.includes('"msg":"request completed"');
    if (isRequestLine) {
      const method = /"method":"([A-Z]+)"/.exec(line)?.[1] ?? '?';
      const route = /"route":"([^"]*)"/.exec(line)?.[1] ?? '?';
      const key = `${method} ${route} ${status}`;
      summary.responses[key] = (summary.responses[key] ?? 0) + 1;
    }
    const ordinary = isRequestLine && level === 'info' && status >= 200 && status < 300;
    if (!ordinary) kept?.write(`${line}\n`);
    // Worth a note: warnings and worse, anything not JSON (stderr), and every non-2xx answer.
    const worthANote = isRequestLine ? !ordinary : !['trace', 'debug', 'info'].includes(level);
    if (worthANote) {
      const message = /"msg":"((?:[^"\\]|\\.)*)"/.exec(line)?.[1] ?? line.slice(0, 200);
      const key = isRequestLine ? `${level}: request completed ${status}` : `${level}: ${message}`;
      const entry = notable.get(key) ?? { level, message: key.slice(level.length + 2), count: 0, example: line.slice(0, 600) };
      entry.count += 1;
      notable.set(key, entry);
    }
  }
  if (kept) {
    await new Promise((resolvePromise) => kept.end(resolvePromise));
    renameSync(`${file}.tmp`, file);
  }
  summary.notable = [...notable.values()].sort((a, b) => b.count - a.count);
  return summary;
}

// ---------------------------------------------------------------------------------------------
// Go/Gin reference: bench/go-gin/main.go, built here, one process per store on its own store.

function goMissing() {
  const missing = commandExists('go') ? [] : ['go'];
  for (const path of GO_IMPORTS) if (!existsSync(join(GO_SYSTEM_GOPATH, 'src', path))) missing.push(path);
  return missing;
}

function debianVersion(pkg) {
  const out = spawnSync('dpkg-query', ['-W', '-f=${Version}\n', pkg], { encoding: 'utf8' });
  return out.status === 0 ? out.stdout.split('\n')[0].trim() || '?' : '?';
}

/** Builds the reference into tempDir; throws (with the reason) when it cannot. */
async function buildGoGin(tempDir) {
  let missing = goMissing();
  if (missing.length && canAptInstall()) {
    log(`bench: Go/Gin reference: ${missing.join(', ')} missing: installing ${GO_DEBIAN_PACKAGES.join(' ')} with apt-get…`);
    aptInstall(GO_DEBIAN_PACKAGES);
    missing = goMissing();
  }
  if (missing.length) {
    throw new Error(`${missing.join(', ')} missing (apt-get install ${GO_DEBIAN_PACKAGES.join(' ')})`);
  }
  const dir = join(tempDir, 'go-gin');
  mkdirSync(join(dir, 'gopath'), { recursive: true });
  const binary = join(dir, 'go-gin');
  const env = { ...process.env, GO111MODULE: 'off', GOPATH: `${GO_SYSTEM_GOPATH}:${join(dir, 'gopath')}`, GOFLAGS: '' };
  const t0 = performance.now();
  await runProcess('go', ['build', '-o', binary, '.'], env, { cwd: GO_DIR });
  const buildS = Math.round((performance.now() - t0) / 100) / 10;
  const goVersion = /go\d+(\.\d+)*/.exec(spawnSync('go', ['version'], { encoding: 'utf8' }).stdout ?? '')?.[0] ?? '?';
  const packages = Object.fromEntries(GO_DEBIAN_PACKAGES.slice(1).map((pkg) => [pkg, debianVersion(pkg)]));
  return { binary, goVersion, packages, buildS, logger: process.env.GIN_LOGGER === '1' };
}

/**
 * The reference for one of the service's stores: its own fresh store of the same kind, its
 * own process, seeded with SEED_BOOKS books through its API.
 */
async function startGoGin(built, store, tempDir, workDir) {
  const target = {
    kind: store.kind,
    label: `Go/Gin, ${store.label}`,
    secret: randomBytes(48).toString('base64url'),
    logFile: join(LOG_DIR, `go-gin-${store.kind}.log`),
  };
  writeFileSync(target.logFile, '');
  const pkg = built.packages;
  if (store.kind === 'sqlite') {
    target.store = await createSqliteStore(tempDir, 'go-gin-sqlite');
    target.description =
      `its own SQLite file in the temp dir (WAL, synchronous=NORMAL, busy_timeout=5000); ` +
      `mattn/go-sqlite3 ${pkg['golang-github-mattn-go-sqlite3-dev']}`;
  } else {
    target.store = await createPostgresStore();
    target.description =
      `its own fresh database on the same PostgreSQL server, dropped afterwards (sslmode=disable unless ` +
      `TEST_POSTGRES_URL sets one, as node-postgres does); lib/pq ${pkg['golang-github-lib-pq-dev']}`;
  }
  // lib/pq requires SSL unless told otherwise; node-postgres (the service) does not use it by default.
  let dbUrl = target.store.url;
  if (store.kind === 'postgres') {
    const url = new URL(dbUrl);
    if (!url.searchParams.has('sslmode')) url.searchParams.set('sslmode', 'disable');
    dbUrl = url.toString();
  }
  checkAborted();
  target.port = await freePort();
  const fd = openSync(target.logFile, 'a');
  try {
    target.child = track(
      spawn(built.binary, [], {
        cwd: workDir,
        env: childEnv({ SECRET_TOKEN: target.secret, PORT: String(target.port), DB_URL: dbUrl }),
        stdio: ['ignore', fd, fd],
      }),
    );
  } finally {
    closeSync(fd);
  }
  try {
    const port = target.port;
    await waitForAnswer(target.child, port, performance.now(), {
      method: 'POST',
      path: '/token',
      body: CREDENTIALS_BODY,
      what: `the Go/Gin reference (${store.label})`,
      logFile: target.logFile,
    });
    target.seededIds = await seedViaApi(port, await getToken(port), SEED_BOOKS);
    const list = await request(port, 'GET', '/books', { token: await getToken(port) });
    if (list.status !== 200 || list.json?.data?.length !== SEED_BOOKS) {
      throw new Error(`GET /books after seeding answered ${list.status} with ${list.json?.data?.length} books`);
    }
  } catch (error) {
    await stopChild(target.child);
    throw error;
  }
  return target;
}

/** The four scenarios against one server (the service or the Go/Gin reference) and its store. */
function storeScenarios(port, seededIds, store) {
  const maxSeeded = Math.max(...seededIds);
  return [
    {
      id: 'get-book',
      name: `GET /book/:id (${SEED_BOOKS} ids in turn)`,
      run: async () => ({ port, paths: seededIds.map((id) => `/book/${id}`), token: await getToken(port) }),
    },
    { id: 'list-books', name: `GET /books (${SEED_BOOKS} books)`, run: async () => ({ port, path: '/books', token: await getToken(port) }) },
    { id: 'login', name: 'POST /token', run: () => ({ port, method: 'POST', path: '/token', body: CREDENTIALS_BODY }) },
    {
      id: 'create-book',
      name: 'POST /book',
      run: async () => ({ port, method: 'POST', path: '/book', body: BOOK_BODY, token: await getToken(port) }),
      // Back to the seeded books, so GET /books lists SEED_BOOKS books in the next round.
      // Requests still queued for the pool when wrk disconnects are completed by the server
      // afterwards, so repeat until no late insert lands after the delete.
      after: async () => {
        let left;
        for (let attempt = 1; attempt <= 40; attempt += 1) {
          left = await store.resetTo(maxSeeded);
          await sleep(250);
          if (left === SEED_BOOKS && (await store.resetTo(maxSeeded)) === SEED_BOOKS) return;
        }
        throw new Error(`${store.label}: ${left} books after reset, expected ${SEED_BOOKS}`);
      },
    },
  ];
}

/** The reference logs only its start and its failures (and every request with GIN_LOGGER=1). */
function goGinLogSummary(file) {
  let lines = [];
  try {
    lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    // no log
  }
  const other = lines.filter((line) => !/listening on :\d+$/.test(line) && !line.startsWith('[GIN] '));
  return { lines: lines.length, notable: other.length, examples: other.slice(0, 3) };
}

function oneLine(text, max = 400) {
  const line = text.trim().replace(/\s*\n\s*/g, ' / ');
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

function assertGoGinAlive(target) {
  if (isRunning(target.child) || target.child.stopping) return;
  throw new Error(
    `the Go/Gin reference (${target.label}, pid ${target.child.pid}) exited ` +
      `(${target.child.signalCode ?? `code ${target.child.exitCode}`}); its last log lines:\n${tailOf(target.logFile, 5)}`,
  );
}

// ---------------------------------------------------------------------------------------------
// Main

/** BENCH_GO: unset = when it can be built, 0 = off, 1 = required. */
function goGinMode() {
  const raw = process.env.BENCH_GO ?? '';
  if (raw === '') return 'auto';
  if (raw === '0') return 'off';
  if (raw === '1') return 'required';
  throw new UsageError(`BENCH_GO must be 0 or 1; got "${raw}"`);
}

async function runBenchmark() {
  handleSignals();
  let settings;
  try {
    settings = {
      rounds: intSetting('BENCH_ROUNDS', 3, 1),
      durationS: intSetting('BENCH_DURATION', 10, 1),
      warmupS: intSetting('BENCH_WARMUP', 2, 0),
      threads: THREADS,
      connections: CONNECTIONS,
      goGin: goGinMode(),
      workers: process.env.BENCH_WORKERS ? intSetting('BENCH_WORKERS', 1, 1) : undefined,
    };
  } catch (error) {
    if (error instanceof UsageError) {
      log(`bench: ${error.message}`);
      process.exit(2);
    }
    throw error;
  }
  serviceWorkers = settings.workers;
  try {
    await benchmark(settings);
    await cleanup();
  } catch (error) {
    if (!aborted) {
      log(`bench: ${error instanceof UsageError ? error.message : (error.stack ?? error)}`);
      await cleanup();
      process.exit(1);
    }
  }
}

async function benchmark(settings) {
  if (!existsSync(MAIN_JS)) throw new UsageError(`${relative(process.cwd(), MAIN_JS)} is missing: run \`npm run bench\` (it builds first)`);
  const wantedStores = (process.env.BENCH_STORES || 'sqlite,postgres').split(',').map((s) => s.trim());
  const tool = chooseTool();
  mkdirSync(LOG_DIR, { recursive: true });

  const tempDir = mkdtempSync(join(os.tmpdir(), 'books-bench-'));
  cleanups.push(() => rmSync(tempDir, { recursive: true, force: true }));
  const workDir = join(tempDir, 'cwd');
  mkdirSync(workDir);

  const machine = {
    cpu: /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? os.cpus()[0]?.model ?? '?',
    cores: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((n) => Math.round(n * 100) / 100),
    loadGenerator: tool.version,
  };
  const started = new Date();
  log(
    `bench: ${settings.rounds} round(s) × ${settings.durationS} s (+${settings.warmupS} s warm-up), ` +
      `${tool.name} ${THREADS} thread / ${CONNECTIONS} connections; ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ` +
      `load ${machine.loadAverageAtStart.join(' ')}`,
  );

  // Stores
  const stores = [];
  const skipped = {};
  if (wantedStores.includes('sqlite')) stores.push(await createSqliteStore(tempDir));
  if (wantedStores.includes('postgres')) {
    try {
      stores.push(await createPostgresStore());
    } catch (error) {
      skipped.postgres = `not reachable at ${redactUrl(POSTGRES_ADMIN_URL)} (TEST_POSTGRES_URL): ${error.message}`;
      log(`bench: PostgreSQL skipped: ${skipped.postgres}`);
    }
  }
  if (stores.length === 0) throw new UsageError(`no store to benchmark (BENCH_STORES=${wantedStores.join(',')})`);
  for (const store of stores) {
    store.secret = randomBytes(48).toString('base64url');
    store.logFile = join(LOG_DIR, `service-${store.kind}.log`);
    writeFileSync(store.logFile, '');
  }

  // Go/Gin reference: built now, started below once the services are seeded.
  const goGin = { mode: settings.goGin, built: null, skipped: settings.goGin === 'off' ? 'BENCH_GO=0' : null };
  if (settings.goGin !== 'off') {
    try {
      goGin.built = await buildGoGin(tempDir);
      log(`bench: Go/Gin reference built with ${goGin.built.goVersion} in ${goGin.built.buildS} s`);
    } catch (error) {
      if (settings.goGin === 'required' || aborted) throw error;
      goGin.skipped = `cannot be built: ${oneLine(error.message)}`;
      log(`bench: Go/Gin reference skipped (BENCH_GO=1 makes this fatal): ${goGin.skipped}`);
    }
  }

  // Startup: the first start migrates the empty store; then STARTUP_SAMPLES restarts.
  for (const store of stores) {
    log(`bench: ${store.label}: startup time (1 first start + ${STARTUP_SAMPLES} restarts)…`);
    const samples = [];
    let firstStartMs;
    for (let i = 0; i <= STARTUP_SAMPLES; i += 1) {
      const service = await startService(store, workDir);
      await stopChild(service.child);
      if (i === 0) firstStartMs = service.startupMs;
      else samples.push(service.startupMs);
    }
    store.startup = { firstStartMs, medianMs: median(samples), samplesMs: samples };
  }

  // Services under test, seeded with SEED_BOOKS books through the API
  for (const store of stores) {
    const service = await startService(store, workDir);
    store.service = service;
    store.seededIds = await seedViaApi(service.port, await getToken(service.port), SEED_BOOKS);
    const list = await request(service.port, 'GET', '/books', { token: await getToken(service.port) });
    if (list.status !== 200 || list.json?.data?.length !== SEED_BOOKS) {
      throw new Error(`${store.label}: GET /books after seeding answered ${list.status} with ${list.json?.data?.length} books`);
    }
    log(`bench: ${store.label}: service pid ${service.child.pid} on port ${service.port}, ${SEED_BOOKS} books seeded`);
  }
  for (const store of goGin.built ? stores : []) {
    try {
      store.goGin = await startGoGin(goGin.built, store, tempDir, workDir);
      log(`bench: ${store.goGin.label}: pid ${store.goGin.child.pid} on port ${store.goGin.port}, ${SEED_BOOKS} books seeded`);
    } catch (error) {
      if (settings.goGin === 'required' || aborted) throw error;
      store.goGinSkipped = `did not start: ${oneLine(error.message)}`;
      log(`bench: Go/Gin reference on ${store.label} skipped: ${store.goGinSkipped}`);
    }
  }
  const baselinePort = await freePort();
  const baseline = spawnBaseline(baselinePort);
  await waitForAnswer(baseline, baselinePort, performance.now(), { method: 'GET', path: '/', what: 'the baseline server' });

  // Scenarios: per store, each scenario on the service, then the same on the Go/Gin reference.
  const scenarios = [
    {
      id: 'baseline',
      name: 'GET (bare node:http, fixed book JSON)',
      label: 'GET (bare node:http, fixed book JSON)',
      target: 'baseline',
      store: null,
      run: () => ({ port: baselinePort, path: '/book/1' }),
    },
  ];
  for (const store of stores) {
    const service = storeScenarios(store.service.port, store.seededIds, store).map((scenario) => ({
      ...scenario,
      label: `${scenario.name} [${store.label}]`,
      target: 'service',
      store,
      assertAlive: () => assertAlive(store.service.child, store),
    }));
    const go = store.goGin
      ? storeScenarios(store.goGin.port, store.goGin.seededIds, store.goGin.store).map((scenario) => ({
          ...scenario,
          label: `${scenario.name} [${store.goGin.label}]`,
          target: 'go-gin',
          store,
          assertAlive: () => assertGoGinAlive(store.goGin),
        }))
      : [];
    service.forEach((scenario, i) => scenarios.push(scenario, ...(go[i] ? [go[i]] : [])));
  }
  for (const scenario of scenarios) {
    scenario.rounds = [];
    scenario.warmups = [];
  }

  for (let round = 1; round <= settings.rounds; round += 1) {
    for (const scenario of scenarios) {
      checkAborted();
      scenario.assertAlive?.();
      const label = scenario.label;
      const options = await scenario.run();
      if (settings.warmupS > 0) scenario.warmups.push(await runLoad(tool, { ...options, duration: settings.warmupS }));
      const result = await runLoad(tool, { ...options, duration: settings.durationS }).catch((error) => {
        scenario.assertAlive?.();
        throw error;
      });
      scenario.rounds.push(result);
      await scenario.after?.();
      log(
        `bench: round ${round}/${settings.rounds} ${label}: ${fmtRps(result.rps)} req/s, ` +
          `p50 ${fmtMs(result.p50Ms)}, p99 ${fmtMs(result.p99Ms)}, errors ${result.errors}`,
      );
    }
  }
  await stopChild(baseline);

  for (const store of stores) {
    store.peak = readPeakRss(store.service.child.pid);
    await stopChild(store.service.child);
    if (store.goGin) {
      store.goGin.peak = readPeakRss(store.goGin.child.pid);
      await stopChild(store.goGin.child);
    }
  }

  // GET /books at LARGE_BOOKS books: filled directly while the service is stopped, fresh process.
  for (const store of stores) {
    const count = await store.fillTo(LARGE_BOOKS);
    if (count !== LARGE_BOOKS) throw new Error(`${store.label}: ${count} books after filling, expected ${LARGE_BOOKS}`);
    const service = await startService(store, workDir);
    const port = service.port;
    let token = await getToken(port);
    const sequential = [];
    for (let i = 0; i < SEQUENTIAL_SAMPLES; i += 1) {
      const t0 = performance.now();
      const response = await request(port, 'GET', '/books', { token });
      sequential.push(performance.now() - t0);
      if (response.status !== 200 || response.json?.data?.length !== LARGE_BOOKS) {
        throw new Error(`${store.label}: GET /books answered ${response.status} with ${response.json?.data?.length} books`);
      }
      if (i === 0) store.largeListBytes = Buffer.byteLength(response.text);
    }
    const rounds = [];
    const warmups = [];
    for (let round = 1; round <= settings.rounds; round += 1) {
      token = await getToken(port);
      const options = { port, path: '/books', token, timeoutS: LARGE_LIST_TIMEOUT_S };
      if (settings.warmupS > 0) warmups.push(await runLoad(tool, { ...options, duration: settings.warmupS }));
      const result = await runLoad(tool, { ...options, duration: settings.durationS });
      rounds.push(result);
      log(
        `bench: round ${round}/${settings.rounds} GET /books (${LARGE_BOOKS.toLocaleString('en-US')} books) [${store.label}]: ` +
          `${fmtRps(result.rps)} req/s, p50 ${fmtMs(result.p50Ms)}, p99 ${fmtMs(result.p99Ms)}, errors ${result.errors}`,
      );
    }
    const peak = readPeakRss(service.child.pid);
    await stopChild(service.child);
    store.largeList = {
      books: LARGE_BOOKS,
      responseBytes: store.largeListBytes,
      sequential: { samples: SEQUENTIAL_SAMPLES, medianMs: median(sequential), maxMs: Math.max(...sequential) },
      ...summarise(rounds, warmups),
      peakRssMiB: round1(peak.peakRssMiB),
      peakRssProcesses: peak.processes,
    };
  }

  for (const store of stores) {
    store.logSummary = await summariseLog(store.logFile, process.env.BENCH_KEEP_LOGS === '1');
  }

  // Results
  const baselineRps = median(scenarios[0].rounds.map((r) => r.rps));
  const summaries = new Map(scenarios.map((scenario) => [scenario, summarise(scenario.rounds, scenario.warmups)]));
  const results = scenarios
    .filter((scenario) => scenario.target !== 'go-gin')
    .map((scenario) => {
      const summary = summaries.get(scenario);
      const go = scenarios.find((o) => o.target === 'go-gin' && o.store === scenario.store && o.id === scenario.id);
      const goSummary = go ? summaries.get(go) : null;
      return {
        id: scenario.id,
        scenario: scenario.name,
        store: scenario.store?.kind ?? 'node:http',
        ...summary,
        ratioToBaseline: baselineRps ? summary.rps / baselineRps : null,
        ratioToGoGin: goSummary?.rps ? summary.rps / goSummary.rps : null,
        goGin: goSummary && { ...goSummary, ratioToBaseline: baselineRps ? goSummary.rps / baselineRps : null },
      };
    });
  const report = {
    generatedAt: started.toISOString(),
    finishedAt: new Date().toISOString(),
    machine,
    settings: { ...settings, warmupBeforeEachRun: true, tool: tool.name, luaScript: relative(ROOT, LUA_SCRIPT) },
    stores: Object.fromEntries([
      ...stores.map((store) => [store.kind, { description: store.description }]),
      ...Object.entries(skipped).map(([kind, reason]) => [kind, { skipped: reason }]),
    ]),
    results,
    peakRssMiB: Object.fromEntries(stores.map((store) => [store.kind, round1(store.peak.peakRssMiB)])),
    peakRssProcesses: Object.fromEntries(stores.map((store) => [store.kind, store.peak.processes])),
    largeList: Object.fromEntries(stores.map((store) => [store.kind, store.largeList])),
    startup: Object.fromEntries(stores.map((store) => [store.kind, store.startup])),
    goGin: {
      source: relative(ROOT, join(GO_DIR, 'main.go')),
      mode: goGin.mode,
      ...(goGin.skipped ? { skipped: goGin.skipped } : {}),
      ...(goGin.built
        ? {
            go: goGin.built.goVersion,
            debianPackages: goGin.built.packages,
            buildS: goGin.built.buildS,
            requestLog: goGin.built.logger,
            stores: Object.fromEntries(
              stores.map((store) => [
                store.kind,
                store.goGin
                  ? {
                      description: store.goGin.description,
                      peakRssMiB: round1(store.goGin.peak.peakRssMiB),
                      log: { file: relative(ROOT, store.goGin.logFile), ...goGinLogSummary(store.goGin.logFile) },
                    }
                  : { skipped: store.goGinSkipped },
              ]),
            ),
          }
        : {}),
    },
    serviceLog: Object.fromEntries(
      stores.map((store) => [store.kind, { file: relative(ROOT, store.logFile), ...store.logSummary }]),
    ),
  };

  const suffix = settings.workers === undefined ? '' : `-workers-${settings.workers}`;
  const resultsFile = join(RESULTS_DIR, `latest${suffix}.json`);
  const docsFile = DOCS_FILE.replace(/\.md$/, `${suffix}.md`);
  writeFileSync(resultsFile, `${JSON.stringify(report, null, 2)}\n`);
  mkdirSync(dirname(docsFile), { recursive: true });
  writeFileSync(docsFile, renderMarkdown(report, stores));
  process.stdout.write(renderConsole(report, stores));
  process.stdout.write(`\nWrote ${relative(process.cwd(), resultsFile)} and ${relative(process.cwd(), docsFile)}\n`);
}

function summarise(rounds, warmups) {
  const sum = (list, pick) => list.reduce((total, item) => total + pick(item), 0);
  return {
    rps: median(rounds.map((r) => r.rps)),
    p50Ms: median(rounds.map((r) => r.p50Ms)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    requests: sum(rounds, (r) => r.requests),
    errors: sum(rounds, (r) => r.errors),
    non2xx: sum(rounds, (r) => r.non2xx),
    socketErrors: Object.fromEntries(
      ['connect', 'read', 'write', 'timeout'].map((kind) => [kind, sum(rounds, (r) => r.socketErrors[kind] ?? 0)]),
    ),
    warmupErrors: sum(warmups, (r) => r.errors),
    rounds: rounds.map(({ raw: _raw, ...rest }) => rest),
  };
}

// ---------------------------------------------------------------------------------------------
// Output

function round1(value) {
  return value == null ? null : Math.round(value * 10) / 10;
}
function fmtRps(value) {
  return value == null ? '–' : Math.round(value).toLocaleString('en-US');
}
function fmtMs(value) {
  if (value == null) return '–';
  return `${value.toFixed(value < 10 ? 2 : value < 100 ? 1 : 0)} ms`;
}
function fmtMiB(value) {
  return value == null ? '–' : `${value.toFixed(1)} MiB`;
}
function fmtRatio(value) {
  return value == null ? '–' : `${value.toFixed(value < 0.1 ? 3 : 2)}×`;
}
function fmtErrors(result) {
  if (result.errors === 0) return '0';
  const parts = [];
  if (result.non2xx) parts.push(`${result.non2xx} non-2xx`);
  for (const [kind, n] of Object.entries(result.socketErrors)) if (n) parts.push(`${n} ${kind}`);
  return `${result.errors} (${parts.join(', ')})`;
}
function storeLabel(kind) {
  return { sqlite: 'SQLite', postgres: 'PostgreSQL', 'node:http': '—' }[kind] ?? kind;
}

function resultRows(report) {
  return report.results.map((r) => [
    r.scenario,
    storeLabel(r.store),
    fmtRps(r.rps),
    fmtMs(r.p50Ms),
    fmtMs(r.p99Ms),
    fmtErrors(r),
    fmtRatio(r.ratioToBaseline),
    fmtRatio(r.ratioToGoGin),
  ]);
}

/** The Go/Gin reference's own figures, per scenario and store. */
function goGinRows(report) {
  return report.results
    .filter((r) => r.goGin)
    .map((r) => [
      r.scenario,
      storeLabel(r.store),
      fmtRps(r.goGin.rps),
      fmtMs(r.goGin.p50Ms),
      fmtMs(r.goGin.p99Ms),
      fmtErrors(r.goGin),
      fmtRatio(r.goGin.ratioToBaseline),
      fmtRatio(r.ratioToGoGin),
    ]);
}

function textTable(header, rows, rightAligned = new Set()) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  const line = (cells) =>
    cells.map((cell, i) => (rightAligned.has(i) ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function mdTable(header, rows, rightAligned = new Set()) {
  const align = header.map((_, i) => (rightAligned.has(i) ? '---:' : '---'));
  return [header, align, ...rows].map((cells) => `| ${cells.join(' | ')} |`).join('\n');
}

const RESULT_HEADER = ['scenario', 'store', 'req/s', 'p50', 'p99', 'errors', 'vs node:http', 'vs Go/Gin'];
const RESULT_RIGHT = new Set([2, 3, 4, 6, 7]);
const GO_HEADER = ['scenario', 'store', 'Go/Gin req/s', 'p50', 'p99', 'errors', 'vs node:http', 'service / Go/Gin'];
const GO_RIGHT = new Set([2, 3, 4, 6, 7]);

function extraRows(report, stores) {
  return stores.map((store) => {
    const large = report.largeList[store.kind];
    return {
      rss: [
        store.label,
        fmtMiB(report.peakRssMiB[store.kind]),
        fmtMiB(large.peakRssMiB),
        fmtMiB(report.goGin.stores?.[store.kind]?.peakRssMiB),
      ],
      large: [
        store.label,
        fmtRps(large.rps),
        fmtMs(large.p50Ms),
        fmtMs(large.p99Ms),
        fmtErrors(large),
        fmtMs(large.sequential.medianMs),
        `${(large.responseBytes / 1024).toFixed(0)} KiB`,
      ],
      startup: [
        store.label,
        fmtMs(report.startup[store.kind].medianMs),
        fmtMs(report.startup[store.kind].firstStartMs),
        report.startup[store.kind].samplesMs.map((ms) => Math.round(ms)).join(', '),
      ],
    };
  });
}

const LARGE_HEADER = ['store', 'req/s', 'p50', 'p99', 'errors', 'one at a time (median of 20)', 'response'];
const RSS_HEADER = [
  'store',
  `peak RSS, ${SEED_BOOKS}-book scenarios`,
  `peak RSS, GET /books at ${LARGE_BOOKS.toLocaleString('en-US')}`,
  `Go/Gin peak RSS, ${SEED_BOOKS}-book scenarios`,
];
const STARTUP_HEADER = ['store', `startup (median of ${STARTUP_SAMPLES})`, 'first start (empty store, migrations)', 'samples (ms)'];

function renderConsole(report, stores) {
  const rows = extraRows(report, stores);
  const { settings, machine } = report;
  return [
    '',
    `Book service benchmark — ${machine.cpu}, ${machine.cores} cores, Node ${machine.node}, ${machine.loadGenerator}`,
    `${settings.threads} thread, ${settings.connections} connections, ${settings.durationS} s per run after ${settings.warmupS} s warm-up, median of ${settings.rounds} round(s); errors summed over the rounds`,
    '',
    textTable(RESULT_HEADER, resultRows(report), RESULT_RIGHT),
    '',
    ...goGinConsole(report),
    `GET /books at ${LARGE_BOOKS.toLocaleString('en-US')} books (${settings.connections} connections):`,
    textTable(LARGE_HEADER, rows.map((r) => r.large), new Set([1, 2, 3, 5, 6])),
    '',
    textTable(RSS_HEADER, rows.map((r) => r.rss), new Set([1, 2, 3])),
    '',
    textTable(STARTUP_HEADER, rows.map((r) => r.startup), new Set([1, 2])),
    ...Object.entries(report.stores)
      .filter(([, s]) => s.skipped)
      .map(([kind, s]) => `\n${storeLabel(kind)} skipped: ${s.skipped}`),
    '',
    ...serviceNotes(report).map((note) => `note: ${note}`),
    '',
  ].join('\n');
}

function goGinSkips(report) {
  const skips = [];
  if (report.goGin.skipped) skips.push(`Go/Gin reference skipped: ${report.goGin.skipped}`);
  for (const [kind, s] of Object.entries(report.goGin.stores ?? {})) {
    if (s.skipped) skips.push(`Go/Gin reference on ${storeLabel(kind)} skipped: ${s.skipped}`);
  }
  return skips;
}

function goGinConsole(report) {
  const rows = goGinRows(report);
  return [
    ...(rows.length ? [`Go/Gin reference (${relative(ROOT, join(GO_DIR, 'main.go'))}), same rounds:`, textTable(GO_HEADER, rows, GO_RIGHT)] : []),
    ...goGinSkips(report),
    ...(rows.length || goGinSkips(report).length ? [''] : []),
  ];
}

/** What the service logged besides 2xx request lines, and every error wrk saw. */
function serviceNotes(report) {
  const notes = [];
  for (const result of report.results) {
    if (result.errors || result.warmupErrors) {
      notes.push(
        `${result.scenario} [${storeLabel(result.store)}]: ${fmtErrors(result)} in measured runs, ` +
          `${result.warmupErrors} error(s) in warm-ups`,
      );
    }
    if (result.goGin && (result.goGin.errors || result.goGin.warmupErrors)) {
      notes.push(
        `${result.scenario} [Go/Gin, ${storeLabel(result.store)}]: ${fmtErrors(result.goGin)} in measured runs, ` +
          `${result.goGin.warmupErrors} error(s) in warm-ups`,
      );
    }
  }
  for (const [kind, large] of Object.entries(report.largeList)) {
    if (large.errors || large.warmupErrors) {
      notes.push(`GET /books at ${LARGE_BOOKS} [${storeLabel(kind)}]: ${fmtErrors(large)}, ${large.warmupErrors} in warm-ups`);
    }
  }
  for (const [kind, summary] of Object.entries(report.serviceLog)) {
    for (const entry of summary.notable) {
      notes.push(`${storeLabel(kind)} service log: ${entry.count} × ${entry.message}`);
    }
  }
  for (const [kind, s] of Object.entries(report.goGin.stores ?? {})) {
    if (s.log?.notable) {
      notes.push(`Go/Gin (${storeLabel(kind)}) log: ${s.log.notable} line(s) besides its start, e.g. ${s.log.examples[0]}`);
    }
  }
  return notes;
}

function renderMarkdown(report, stores) {
  const rows = extraRows(report, stores);
  const { settings, machine } = report;
  const date = report.generatedAt.slice(0, 10);
  const storeLines = Object.entries(report.stores).map(
    ([kind, s]) => `- **${storeLabel(kind)}:** ${s.skipped ? `skipped — ${s.skipped}` : s.description}`,
  );
  const go = report.goGin;
  const goRows = goGinRows(report);
  const goStoreLines = Object.entries(go.stores ?? {}).map(
    ([kind, s]) => `- **Go/Gin, ${storeLabel(kind)}:** ${s.skipped ? `skipped — ${s.skipped}` : s.description}`,
  );
  const goVersions = go.debianPackages
    ? `${go.go}; Debian packages: ${Object.entries(go.debianPackages)
        .map(([pkg, version]) => `${pkg.replace(/^golang-github-/, '').replace(/-dev$/, '')} ${version}`)
        .join(', ')}`
    : '';
  const notes = serviceNotes(report);
  return `# Benchmarks

Generated by \`npm run bench\` ([scripts/bench.mjs](../scripts/bench.mjs)) on ${date}; rerun it to refresh this
page rather than editing it. Raw numbers of the last run: \`bench-results/latest.json\` (not committed).

## Machine and settings

| | |
|---|---|
| CPU | ${machine.cpu} |
| cores | ${machine.cores} |
| memory | ${machine.memoryGiB} GiB |
| OS | ${machine.os} |
| Node | ${machine.node} |
| load average at start | ${machine.loadAverageAtStart.join(', ')} |
| date | ${report.generatedAt} |
| load generator | ${machine.loadGenerator}, ${settings.threads} thread, ${settings.connections} connections (${
    settings.tool === 'wrk'
      ? `\`wrk -t${settings.threads} -c${settings.connections} -d${settings.durationS}s --latency -s scripts/bench/scenario.lua\``
      : `\`autocannon -c ${settings.connections} -d ${settings.durationS}\`; GET /book/:id asks for one id only`
  }), on the same machine |
| rounds × duration | ${settings.rounds} × ${settings.durationS} s, each run after a ${settings.warmupS} s warm-up; rounds go round-robin over all scenarios; figures are medians, errors are summed over the rounds |

${[...storeLines, ...goStoreLines].join('\n')}

The service is the built \`node dist/main.js\` with its default settings except \`SECRET_TOKEN\`,
\`PORT\` and \`DB_URL\`${
    settings.workers === undefined
      ? ''
      : ` and **\`WORKERS=${settings.workers}\`** (BENCH_WORKERS: ${settings.workers} node:cluster workers behind one primary; peak RSS below adds up all of its processes)`
  } (so \`LOG_LEVEL=info\`: one JSON log line per request, written to a file), on
a fresh store seeded with ${SEED_BOOKS} books through the API. The baseline is a bare \`node:http\`
server in its own process that answers every request with a fixed ${Buffer.byteLength(BASELINE_BODY)}-byte book envelope.

The **Go/Gin reference** ([bench/go-gin/main.go](../bench/go-gin/main.go)) is the reference the service's
speed is compared with: a plain Go + Gin + \`database/sql\` implementation of the same API (same routes, status
codes and envelopes), not part of the service. It runs \`gin.New()\` with \`gin.Recovery()\` in release mode
(${go.requestLog ? 'with gin\'s request logger, GIN_LOGGER=1, to a file' : 'no per-request log, unlike the service'}), \`database/sql\` with its default pool, SQLite via mattn/go-sqlite3
(WAL, \`synchronous=NORMAL\`) and PostgreSQL via lib/pq. ${
    go.skipped
      ? `It was skipped in this run: ${go.skipped}.`
      : `Built by the bench (${goVersions}), it gets its own fresh store of each kind, is seeded with the same
${SEED_BOOKS} books through its API, and runs the same scenarios in the same rounds, each of its runs right
after the service's run of the same scenario, so both see the same machine conditions.`
  }

## Throughput and latency

${mdTable(RESULT_HEADER, resultRows(report), RESULT_RIGHT)}

- **GET /book/:id** cycles through the ${SEED_BOOKS} seeded ids; **POST /book** creates books (deleted again
  after each run, so GET /books always lists ${SEED_BOOKS}); **POST /token** logs in with the correct credentials.
- **errors** counts non-2xx responses and socket errors (connect, read, write, timeout) reported by wrk.
- **vs node:http** is the scenario's req/s divided by the baseline's.
- **vs Go/Gin** is the service's req/s divided by the Go/Gin reference's on the same scenario and kind of store
  (above 1× the service is faster).
${
  goRows.length
    ? `
### Go/Gin reference

${mdTable(GO_HEADER, goRows, GO_RIGHT)}
`
    : ''
}${goGinSkips(report).length ? `\n${goGinSkips(report).map((line) => `- ${line}`).join('\n')}\n` : ''}
## GET /books at ${LARGE_BOOKS.toLocaleString('en-US')} books

${mdTable(LARGE_HEADER, rows.map((r) => r.large), new Set([1, 2, 3, 5, 6]))}

The store is filled to ${LARGE_BOOKS.toLocaleString('en-US')} rows directly (SQLite: one transaction while the
service is stopped; PostgreSQL: \`INSERT … SELECT generate_series\`), then a fresh service process serves
${settings.connections} connections (wrk timeout raised to ${LARGE_LIST_TIMEOUT_S} s so slow answers are timed, not dropped).
"One at a time" is a single client sending ${SEQUENTIAL_SAMPLES} sequential requests.

## Memory

${mdTable(RSS_HEADER, rows.map((r) => r.rss), new Set([1, 2, 3]))}

Peak resident set size (\`VmHWM\` from \`/proc/<pid>/status\`) of the service process at the end of its run
(added up over its child processes, if it has any):
one process served all ${SEED_BOOKS}-book scenarios of a store; another, fresh one the ${LARGE_BOOKS.toLocaleString('en-US')}-book list.
The Go/Gin reference's peak is read the same way, from its one process per store.

## Startup

${mdTable(STARTUP_HEADER, rows.map((r) => r.startup), new Set([1, 2]))}

Milliseconds from spawning \`node dist/main.js\` to the first \`200\` answer (to \`POST /token\`, polled every 5 ms);
the service listens only once the store is open and migrated. The first start creates the schema in the
empty store; the median is over ${STARTUP_SAMPLES} restarts on the migrated store.
${notes.length ? `\n## Notes from this run\n\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''}
Numbers from one machine with the load generator on the same cores as the service: compare
rows of one run with each other, not with runs on other machines.
`;
}

// ---------------------------------------------------------------------------------------------
// Entry (last, so every constant above is initialised)

if (process.argv[2] === '--baseline-server') {
  runBaselineServer(Number(process.argv[3]));
} else {
  await runBenchmark();
}
