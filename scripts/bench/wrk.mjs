// The load generator: wrk (installed with apt-get when missing and running as root), or
// autocannon via npx as the fallback; one load run and its figures parsed from the output.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import process from 'node:process';
import { runProcess } from './children.mjs';
import { pinned } from './processes.mjs';
import { log } from './log.mjs';
import { CONNECTIONS, LUA_SCRIPT, THREADS, UsageError, wantedTool } from './settings.mjs';
import { aptInstall, canAptInstall, commandExists } from './system.mjs';

/** BENCH_TOOL, or the fallback; returns { name, version }. */
export function chooseTool() {
  const wanted = wantedTool();
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

/**
 * One load run (wrk pinned to `cpu` when given; `connections`, CONNECTIONS unless given); returns
 * { rps, p50Ms, p99Ms, maxMs, requests, non2xx, socketErrors, errors, raw }.
 * `idempotencyKeys`: every request carries a fresh Idempotency-Key (wrk only). `expectStatus`:
 * throws if any answer has another status, or is a replay (Idempotent-Replayed), since the run
 * would then not measure what it says (wrk only).
 */
export async function runLoad(tool, { port, method = 'GET', path = '/', paths, token, body, duration, timeoutS, cpu, idempotencyKeys, expectStatus, connections = CONNECTIONS }) {
  if ((idempotencyKeys || expectStatus) && tool.name !== 'wrk') {
    throw new UsageError('a fresh Idempotency-Key per request and the status check need wrk (BENCH_TOOL=wrk)');
  }
  if (tool.name === 'wrk') {
    const args = [`-t${THREADS}`, `-c${connections}`, `-d${duration}s`, '--latency'];
    if (timeoutS) args.push('--timeout', `${timeoutS}s`);
    args.push('-s', LUA_SCRIPT, `http://127.0.0.1:${port}${path}`);
    const env = {
      ...process.env,
      BENCH_METHOD: method,
      BENCH_TOKEN: token ?? '',
      BENCH_BODY: body ?? '',
      BENCH_PATHS: paths ? paths.join(',') : '',
      // New for every wrk run: the script's key counters restart at 1 in each run.
      BENCH_KEY_PREFIX: idempotencyKeys ? randomBytes(8).toString('hex') : '',
      BENCH_EXPECT_STATUS: expectStatus ? String(expectStatus) : '',
    };
    const { stdout } = await runProcess(...pinned(cpu, 'wrk', args), env);
    const result = parseWrk(stdout);
    if (expectStatus) assertExpectedStatus(stdout, `${method} ${paths ? paths[0] : path} on port ${port}`);
    return result;
  }
  // autocannon: no per-request paths from the command line, so a cycling scenario uses its first path.
  const args = ['--yes', 'autocannon', '-j', '-c', String(connections), '-d', String(duration), '-m', method];
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
    maxMs: result.latency.max,
    requests: result.requests.total,
    non2xx,
    socketErrors,
    errors: non2xx + socketErrors.timeout + socketErrors.other,
    raw: stdout,
  };
}

/** The line scenario.lua's done() prints with BENCH_EXPECT_STATUS; throws unless it says 0. */
function assertExpectedStatus(output, what) {
  const match = /^Unexpected responses: (\d+) \(([^)]*)\)(?: \(first: (.*)\))?$/m.exec(output);
  if (!match) throw new Error(`${what}: wrk did not report the status check (scenario.lua's done()):\n${output}`);
  const unexpected = Number(match[1]);
  if (unexpected > 0) {
    const total = /^\s*(\d+) requests in /m.exec(output)?.[1] ?? '?';
    throw new Error(`${what}: ${unexpected} of ${total} answers broke the check (${match[2]}); the first: ${match[3]}`);
  }
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
  // "    Latency   avg   stdev   max   +/- stdev"
  const maxMs = parseDuration(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(output)?.[1] ?? '');
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
  return { rps, p50Ms: percentile(50), p99Ms: percentile(99), maxMs, requests, non2xx, socketErrors, errors, raw: output };
}
