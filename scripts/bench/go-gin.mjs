// The Go/Gin reference (bench/go-gin/main.go): built into the temp dir in GOPATH mode from Debian
// packages (installed with apt-get when missing and running as root), then one process per
// store on its own fresh store, seeded with the same books through its API; and its log.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { URL } from 'node:url';
import { checkAborted, isAborted, isRunning, runProcess, stopChild } from './children.mjs';
import { freePort } from './client.mjs';
import { oneLine } from './format.mjs';
import { log } from './log.mjs';
import { childEnv, spawnLogged, tailOf, waitForAnswer } from './processes.mjs';
import { seedAndCheck } from './seed.mjs';
import { CREDENTIALS_BODY, GO_DIR, LOG_DIR, SEED_BOOKS, ginRequestLog } from './settings.mjs';
import { createMysqlStore, createPostgresStore, createSqliteStore } from './stores.mjs';
import { aptInstall, canAptInstall, commandExists, debianVersion } from './system.mjs';

/** Debian's Go sources, for building in GOPATH mode offline. */
const GO_SYSTEM_GOPATH = '/usr/share/gocode';
const GO_DEBIAN_PACKAGES = [
  'golang-go', 'golang-github-gin-gonic-gin-dev', 'golang-github-mattn-go-sqlite3-dev',
  'golang-github-lib-pq-dev', 'golang-github-golang-jwt-jwt-dev', 'golang-github-go-sql-driver-mysql-dev',
];
const GO_IMPORTS = [
  'github.com/gin-gonic/gin', 'github.com/mattn/go-sqlite3', 'github.com/lib/pq', 'github.com/golang-jwt/jwt',
  'github.com/go-sql-driver/mysql',
];

function goMissing() {
  const missing = commandExists('go') ? [] : ['go'];
  for (const path of GO_IMPORTS) if (!existsSync(join(GO_SYSTEM_GOPATH, 'src', path))) missing.push(path);
  return missing;
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
  return { binary, goVersion, packages, buildS, logger: ginRequestLog() };
}

/**
 * The reference as BENCH_GO wants it (`mode`: auto, off, required): { mode, built, skipped }, built
 * unless off; a failure to build skips it, with the reason, unless it is required.
 */
export async function prepareGoGin(mode, tempDir) {
  const goGin = { mode, built: null, skipped: mode === 'off' ? 'BENCH_GO=0' : null };
  if (mode !== 'off') {
    try {
      goGin.built = await buildGoGin(tempDir);
      log(`bench: Go/Gin reference built with ${goGin.built.goVersion} in ${goGin.built.buildS} s`);
    } catch (error) {
      if (mode === 'required' || isAborted()) throw error;
      goGin.skipped = `cannot be built: ${oneLine(error.message)}`;
      log(`bench: Go/Gin reference skipped (BENCH_GO=1 makes this fatal): ${goGin.skipped}`);
    }
  }
  return goGin;
}

/**
 * The reference for one of the service's stores: its own fresh store of the same kind, seeded
 * with SEED_BOOKS books through its API by its first process; `cpu` pins its process.
 * Called again with the same target (a later half of the run), it restarts the process on
 * the same store without seeding again.
 */
async function startGoGin(built, store, tempDir, workDir, cpu, existing) {
  const target = existing ?? {
    kind: store.kind,
    label: `Go/Gin, ${store.label}`,
    secret: randomBytes(48).toString('base64url'),
    logFile: join(LOG_DIR, `go-gin-${store.kind}.log`),
  };
  if (!existing) {
    writeFileSync(target.logFile, '');
    const pkg = built.packages;
    if (store.kind === 'sqlite') {
      target.store = await createSqliteStore(tempDir, 'go-gin-sqlite');
      target.description =
        `its own SQLite file in the temp dir (WAL, synchronous=NORMAL, busy_timeout=5000; one writer ` +
        `connection, a read pool of max(4, 2 × GOMAXPROCS)); mattn/go-sqlite3 ${pkg['golang-github-mattn-go-sqlite3-dev']}`;
    } else if (store.kind === 'mysql') {
      target.store = await createMysqlStore();
      target.description =
        `its own fresh database on the same MariaDB server, dropped afterwards (a fixed pool of 10 connections, ` +
        `as the service's default; clientFoundRows=true); go-sql-driver/mysql ${pkg['golang-github-go-sql-driver-mysql-dev']}`;
    } else {
      target.store = await createPostgresStore();
      target.description =
        `its own fresh database on the same PostgreSQL server, dropped afterwards (sslmode=disable unless ` +
        `TEST_POSTGRES_URL sets one, as node-postgres does; a fixed pool of 10 connections, as the service's ` +
        `default); lib/pq ${pkg['golang-github-lib-pq-dev']}`;
    }
  }
  const { child, port } = await spawnGoGin(built, target, workDir, cpu);
  target.child = child;
  target.port = port;
  try {
    target.seededIds ??= await seedAndCheck(port);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return target;
}

/**
 * A process of the built reference on `target`'s store (pinned to `cpu` if given), timed from
 * spawn to its first 200 as the service is (processes.mjs startService); returns
 * { child, port, startupMs }.
 */
export async function spawnGoGin(built, target, workDir, cpu) {
  // lib/pq requires SSL unless told otherwise; node-postgres (the service) does not use it by default.
  let dbUrl = target.store.url;
  if (target.kind === 'postgres') {
    const url = new URL(dbUrl);
    if (!url.searchParams.has('sslmode')) url.searchParams.set('sslmode', 'disable');
    dbUrl = url.toString();
  }
  checkAborted();
  const port = await freePort();
  const startedAt = performance.now();
  const child = spawnLogged(built.binary, [], {
    cwd: workDir,
    cpu,
    env: childEnv({ SECRET_TOKEN: target.secret, PORT: String(port), DB_URL: dbUrl }),
    logFile: target.logFile,
  });
  try {
    const startupMs = await waitForAnswer(child, port, startedAt, {
      method: 'POST',
      path: '/token',
      body: CREDENTIALS_BODY,
      what: `the Go/Gin reference (${target.store.label})`,
      logFile: target.logFile,
    });
    return { child, port, startupMs };
  } catch (error) {
    await stopChild(child);
    throw error;
  }
}

/**
 * Starts the built reference next to each store's service (as `store.goGin`), pinned to `cpu`
 * if given; one that does not start is skipped (`store.goGinSkipped`) unless the reference is
 * required.
 */
export async function startGoGins(goGin, stores, tempDir, workDir, cpu) {
  for (const store of goGin.built ? stores : []) {
    if (store.goGinSkipped) continue;
    try {
      store.goGin = await startGoGin(goGin.built, store, tempDir, workDir, cpu, store.goGin);
      log(`bench: ${store.goGin.label}: pid ${store.goGin.child.pid} on port ${store.goGin.port}, ${SEED_BOOKS} books seeded`);
    } catch (error) {
      if (goGin.mode === 'required' || isAborted()) throw error;
      store.goGinSkipped = `did not start: ${oneLine(error.message)}`;
      store.goGin = undefined;
      log(`bench: Go/Gin reference on ${store.label} skipped: ${store.goGinSkipped}`);
    }
  }
}

/**
 * The reference logs only its start and its failures (and every request with GIN_LOGGER=1).
 * gin.Recovery reports an answer whose client has gone (wrk closing its connections at the end
 * of a run, mid-way through a 10,000-book answer) as a block of lines: counted apart, as cutOff.
 */
export function goGinLogSummary(file) {
  let lines = [];
  try {
    lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  } catch {
    // no log
  }
  const other = [];
  let cutOff = 0;
  let inBlock = false;
  for (const line of lines) {
    if (/: (write: broken pipe|connection reset by peer)$/.test(line)) {
      cutOff += 1;
      inBlock = true;
    } else if (inBlock) {
      inBlock = line !== '\u001b[0m';
    } else if (!/listening on :\d+$/.test(line) && !line.startsWith('[GIN] ')) {
      other.push(line);
    }
  }
  return { lines: lines.length, cutOff, notable: other.length, examples: other.slice(0, 3) };
}

export function assertGoGinAlive(target) {
  if (isRunning(target.child) || target.child.stopping) return;
  throw new Error(
    `the Go/Gin reference (${target.label}, pid ${target.child.pid}) exited ` +
      `(${target.child.signalCode ?? `code ${target.child.exitCode}`}); its last log lines:\n${tailOf(target.logFile, 5)}`,
  );
}
