// A Jepsen-style register workload against running service instances: K books are the
// registers (their title the value); C clients, each with one request in flight, pick a random
// book and a random instance and either PUT a new, unique title or GET the book, recording
// every operation for the linearizability checker (checker.ts).
import { Agent, request } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { RegisterOp } from './checker.js';
import { login } from '../client/api-client.js';
import { nodesInUse } from '../client/failover.js';

export interface WorkloadInstance {
  /** How the instance is named in explanations (e.g. "galera2", "multi"). */
  name: string;
  baseUrl: string;
  /** Its DB_URL lists several hosts: the node in use is polled from /metrics and shown per op. */
  multiHost?: boolean;
}

export interface RegisterWorkloadOptions {
  instances: readonly WorkloadInstance[];
  /** Registers (books), created through the first instance (default 5). */
  books?: number;
  /** Concurrent clients (default 10). */
  clients?: number;
  /** Share of operations that are writes (default 0.5). */
  writeShare?: number;
  /** A request not answered by then is aborted: its outcome is unknown (default 5 s). */
  requestTimeoutMs?: number;
  /** Names a database node for explanations (`127.0.0.1:port` → "galera1"). */
  nodeName?: (address: string) => string;
}

export interface RegisterWorkloadResult {
  history: RegisterOp[];
  /** Book id → title at creation: each register's initial value. */
  initial: Map<string, string | null>;
  /** performance.now() when the clients started: time zero of the explanations. */
  origin: number;
  /** Date.now() at `origin`, to line service log times up with the history's. */
  originEpochMs: number;
  /** Counts by operation and answer, e.g. "PUT 200: 812; GET 503: 4". */
  summary: string;
  /** Answers that break the API's promises whatever the order (a 200 PUT answering another title…). */
  problems: string[];
  /** For each multi-host instance: the node in use over time, as polled. */
  nodeTimeline: string[];
}

export interface RunningWorkload {
  /** Date.now() when the clients started. */
  originEpochMs: number;
  /** Stops the clients (each finishes the request it has in flight) and returns the history. */
  stop(): Promise<RegisterWorkloadResult>;
}

interface Answer {
  status?: number;
  body?: string;
  error?: string;
}

/**
 * Creates the books and starts the clients; they run until `stop()`. A client whose request
 * ended unknown goes on as a new process (its old request may still be in flight).
 */
export async function startRegisterWorkload(options: RegisterWorkloadOptions): Promise<RunningWorkload> {
  const { instances, books = 5, clients = 10, writeShare = 0.5, requestTimeoutMs = 5_000, nodeName = (address: string) => address } = options;
  const first = instances[0];
  if (first === undefined) throw new Error('the register workload needs at least one instance');
  // Keep-alive: a fresh connection per request would measure connection setup, and exhaust
  // ports under load; each client has at most one request in flight.
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  const token = await login(first.baseUrl);

  const send = (instance: WorkloadInstance, method: string, path: string, body?: unknown): Promise<Answer> =>
    new Promise((resolve) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const headers: Record<string, string> = { authorization: token };
      if (payload !== undefined) headers['content-type'] = 'application/json';
      const req = request(
        `${instance.baseUrl}${path}`,
        { method, headers, agent, signal: AbortSignal.timeout(requestTimeoutMs) },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode, body: text }));
          response.on('error', (error: Error & { code?: string }) => resolve({ error: error.code ?? error.name }));
        },
      );
      req.on('error', (error: Error & { code?: string }) => resolve({ error: error.code ?? error.name }));
      req.end(payload);
    });
  const dataOf = (answer: Answer): { id?: number | string; title?: string } | undefined => {
    try {
      return (JSON.parse(answer.body ?? '') as { data?: { id?: number; title?: string } }).data;
    } catch {
      return undefined;
    }
  };

  const initial = new Map<string, string | null>();
  const tag = Math.random().toString(36).slice(2, 8);
  for (let n = 0; n < books; n++) {
    const title = `register ${n} ${tag} initial`;
    let created: Answer = {};
    // The cluster is steady here; a 503 is retried rather than failing the setup.
    for (let tries = 0; tries < 20 && created.status !== 201; tries++) {
      if (tries > 0) await sleep(250);
      created = await send(first, 'POST', '/book', { title, author: 'Register', year: 2000 });
    }
    const id = dataOf(created)?.id;
    if (created.status !== 201 || id === undefined) throw new Error(`creating register book ${n} failed: ${created.status ?? created.error} ${created.body ?? ''}`);
    initial.set(String(id), title);
  }
  const keys = [...initial.keys()];

  const history: RegisterOp[] = [];
  const problems: string[] = [];
  const counts = new Map<string, number>();
  const origin = performance.now();
  const originEpochMs = Date.now();
  let running = true;
  let nextProcess = 0;
  let sequence = 0;

  // The node each multi-host instance is on, polled, so an op can say which node served it.
  const nodeNow = new Map<string, string>();
  const timelines = new Map<string, string[]>();
  const pollers = instances
    .filter((instance) => instance.multiHost)
    .map(async (instance) => {
      const timeline: string[] = [];
      timelines.set(instance.name, timeline);
      while (running) {
        const inUse = await nodesInUse(instance.baseUrl).catch(() => undefined);
        const node = inUse && Object.entries(inUse).find(([, value]) => value === 1)?.[0];
        if (node !== undefined && nodeNow.get(instance.name) !== node) {
          timeline.push(`${((performance.now() - origin) / 1000).toFixed(2)} s: on ${nodeName(node)}`);
          nodeNow.set(instance.name, node);
        }
        await sleep(50);
      }
    });

  async function client(clientIndex: number) {
    let process = nextProcess++;
    while (running) {
      const key = keys[Math.floor(Math.random() * keys.length)]!;
      const instance = instances[Math.floor(Math.random() * instances.length)]!;
      const isWrite = Math.random() < writeShare;
      const value = isWrite ? `c${clientIndex}-${sequence++}` : null;
      const node = instance.multiHost ? nodeNow.get(instance.name) : undefined;
      const invokedAt = performance.now();
      const answer = await send(instance, isWrite ? 'PUT' : 'GET', `/book/${key}`, isWrite ? { title: value } : undefined);
      const completedAt = performance.now();
      const answered = answer.status !== undefined ? `HTTP ${answer.status}` : (answer.error ?? 'no answer');
      counts.set(`${isWrite ? 'PUT' : 'GET'} ${answered}`, (counts.get(`${isWrite ? 'PUT' : 'GET'} ${answered}`) ?? 0) + 1);
      const nodeAfter = instance.multiHost ? nodeNow.get(instance.name) : undefined;
      const where = node === undefined ? '' : node === nodeAfter ? ` on ${nodeName(node)}` : ` on ${nodeName(node)}→${nodeName(nodeAfter ?? '?')}`;
      const detail = `client ${clientIndex} via ${instance.name}${where}: ${answered}`;
      const op: RegisterOp = { process, key, kind: isWrite ? 'write' : 'read', value, invokedAt, completedAt, outcome: 'unknown', detail };
      if (isWrite) {
        // 400 and 404 promise that nothing was written; any other failure (503, a 500, a
        // timeout, a dropped connection) may have written it, now or later.
        if (answer.status === 200) {
          op.outcome = 'ok';
          const title = dataOf(answer)?.title;
          if (title !== value) problems.push(`PUT /book/${key} ${JSON.stringify(value)} answered 200 with title ${JSON.stringify(title)} (${detail})`);
        } else if (answer.status === 400 || answer.status === 404) {
          op.outcome = 'fail';
        }
      } else if (answer.status === 200) {
        op.outcome = 'ok';
        op.value = dataOf(answer)?.title ?? null;
      } else if (answer.status === 404) {
        // Books are never deleted here: "not found" is a read of an absent register.
        op.outcome = 'ok';
        op.value = null;
      }
      history.push(op);
      if (op.outcome === 'unknown') process = nextProcess++;
    }
  }
  const done = Promise.all(Array.from({ length: clients }, (_, index) => client(index)));

  return {
    originEpochMs,
    async stop() {
      running = false;
      await Promise.all([done, ...pollers]);
      agent.destroy();
      return {
        history,
        initial,
        origin,
        originEpochMs,
        summary: [...counts]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([what, count]) => `${what}: ${count}`)
          .join('; '),
        problems,
        nodeTimeline: [...timelines].map(([name, timeline]) => `${name}: ${timeline.join(', ') || '(never polled)'}`),
      };
    },
  };
}
