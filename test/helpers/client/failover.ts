// Shared by the failover suites (Galera node loss, PostgreSQL primary loss): write load that
// records every outcome with what it sent, the 503 envelope check, and the node in use as
// `/metrics` reports it (book_store_node_in_use).
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt, describeOutcome, type Outcome } from './attempt.js';
import type { Book } from './books.js';

export const UNAVAILABLE = { status: 503, message: 'Service unavailable', data: null };

export const isSuccess = (outcome: Outcome) => outcome.status === 200 || outcome.status === 201;

/** The service's own 503: its JSON envelope, nothing else. */
export const isUnavailable = (outcome: Outcome) =>
  outcome.status === 503 &&
  JSON.stringify(outcome.body) === JSON.stringify(UNAVAILABLE) &&
  /^application\/json/.test(outcome.contentType ?? '');

/** Counts by method, path shape and status, for failure messages and the log. */
export function summary(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    const key = `${outcome.method} ${outcome.path.replace(/\/\d+$/, '/:id')} → ${outcome.status ?? outcome.errorCode}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, count]) => `${key}: ${count}`).join('; ');
}

/** Every outcome that is neither 2xx nor the 503 envelope (a 500, another 5xx, a 4xx, a dropped connection). */
export function unexpected(outcomes: Outcome[]): string[] {
  return outcomes.filter((outcome) => !isSuccess(outcome) && !isUnavailable(outcome)).map(describeOutcome);
}

export interface Write {
  instance: string;
  sent: Omit<Book, 'id'>;
  outcome: Outcome;
}

export interface WriteLoad {
  writes: Write[];
  stop(): Promise<void>;
}

/**
 * `loops` clients per target, each POSTing books with unique titles one after the other
 * (a short pause between) until stopped. Every outcome is kept with the book it sent.
 */
export function startWriteLoad(
  targets: ReadonlyArray<{ name: string; baseUrl: string; token: string }>,
  { loops = 3, pauseMs = 20, prefix = 'Load' }: { loops?: number; pauseMs?: number; prefix?: string } = {},
): WriteLoad {
  const writes: Write[] = [];
  let running = true;
  let sequence = 0;
  async function loop(target: { name: string; baseUrl: string; token: string }) {
    while (running) {
      const n = sequence++;
      const sent = { title: `${prefix} ${n} via ${target.name}`, author: `Writer ${n % 7}`, year: 1900 + (n % 120) };
      const outcome = await attempt(target.baseUrl, 'POST', '/book', { token: target.token, body: sent, timeoutMs: 20_000 });
      writes.push({ instance: target.name, sent, outcome });
      await sleep(pauseMs);
    }
  }
  const done = Promise.all(targets.flatMap((target) => Array.from({ length: loops }, () => loop(target))));
  return {
    writes,
    async stop() {
      running = false;
      await done;
    },
  };
}

/**
 * Problems with acknowledged creates: a 201 whose body is not the book sent with a numeric id,
 * or an id given to two different books.
 */
export function acknowledgedProblems(writes: Write[]): string[] {
  const problems: string[] = [];
  const byId = new Map<number, Write>();
  for (const write of writes.filter((w) => w.outcome.status === 201)) {
    const body = write.outcome.body as { status?: number; message?: string; data?: Book } | undefined;
    const book = body?.data;
    if (body?.status !== 201 || body.message !== 'Book created successfully' || !book || typeof book.id !== 'number') {
      problems.push(`a 201 that is not the created-book envelope: ${describeOutcome(write.outcome)}`);
      continue;
    }
    if (book.title !== write.sent.title || book.author !== write.sent.author || book.year !== write.sent.year) {
      problems.push(`a 201 whose book is not the one sent (${JSON.stringify(write.sent)}): ${describeOutcome(write.outcome)}`);
    }
    const earlier = byId.get(book.id);
    if (earlier) problems.push(`id ${book.id} given to two books: ${describeOutcome(earlier.outcome)} and ${describeOutcome(write.outcome)}`);
    byId.set(book.id, write);
  }
  return problems;
}

/** The acknowledged (201) books, as the service answered them. */
export function acknowledgedBooks(writes: Write[]): Book[] {
  return writes.filter((write) => write.outcome.status === 201).map((write) => (write.outcome.body as { data: Book }).data);
}

/**
 * Reads every book back through `baseUrl` (GET /book/:id, `concurrency` at a time) and returns
 * the ones that are not there exactly as acknowledged.
 */
export async function missingBooks(baseUrl: string, token: string, books: Book[], concurrency = 20): Promise<string[]> {
  const problems: string[] = [];
  let next = 0;
  async function worker() {
    while (next < books.length) {
      const book = books[next++]!;
      const read = await attempt(baseUrl, 'GET', `/book/${book.id}`, { token });
      const data = (read.body as { data?: unknown } | undefined)?.data;
      if (read.status !== 200 || JSON.stringify(data) !== JSON.stringify(book)) {
        problems.push(`book ${book.id} ${JSON.stringify(book)} read back as ${describeOutcome(read)}`);
      }
    }
  }
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return problems;
}

/** `book_store_node_in_use` from GET /metrics: node → 0 or 1. Throws when the metric is missing. */
export async function nodesInUse(baseUrl: string): Promise<Record<string, number>> {
  const response = await fetch(`${baseUrl}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await response.text();
  const nodes: Record<string, number> = {};
  for (const match of text.matchAll(/^book_store_node_in_use\{node="([^"]*)"\} (\S+)$/gm)) nodes[match[1]!] = Number(match[2]);
  if (Object.keys(nodes).length === 0) {
    throw new Error(`no book_store_node_in_use in GET /metrics (HTTP ${response.status}):\n${text.split('\n').filter((line) => line.startsWith('book_')).join('\n')}`);
  }
  return nodes;
}

/** The one node `book_store_node_in_use` reports as 1, or undefined if none or several. */
export async function nodeInUse(baseUrl: string): Promise<string | undefined> {
  const inUse = Object.entries(await nodesInUse(baseUrl)).filter(([, value]) => value === 1);
  return inUse.length === 1 ? inUse[0]![0] : undefined;
}

/** Polls `check` every `intervalMs` until it returns a value other than undefined, or throws after `timeoutMs` with `describe()`. */
export async function waitFor<T>(check: () => Promise<T | undefined>, timeoutMs: number, describe: () => string, intervalMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${describe()}`);
    await sleep(intervalMs);
  }
}
