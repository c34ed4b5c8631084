// Many POST /token from one client address at once, sent the way a patient attacker would:
// every request's headers first, and the bodies only once all the headers are in. Every
// attempt is then past the check that runs before the body, so what the service answers shows
// whether its decision is atomic, not how fast one request finished before the next began.
import { expect } from 'vitest';
import { rawExchange, requestBytes, type RawResponse } from './raw-http.js';
import { TEST_USERNAME } from './test-account.js';

export interface ConcurrentLoginOptions {
  /** X-Forwarded-For (the service must trust it: TRUST_PROXY=true). */
  address: string;
  /** How long the bodies wait after the last request's headers were written. */
  holdBodiesMs?: number;
  /** Attempt i connects to `ports[i % ports.length]` (several instances: spread over them). */
  ports: readonly number[];
}

/** One login per password, each on its own connection; the answers in the same order. */
export async function concurrentLogins(passwords: readonly string[], { address, ports, holdBodiesMs = 300 }: ConcurrentLoginOptions): Promise<RawResponse[]> {
  let headersWritten = 0;
  let releaseBodies: () => void = () => undefined;
  const bodiesMayGo = new Promise<void>((resolve) => (releaseBodies = resolve));
  const exchanges = passwords.map((password, i) => {
    const bytes = requestBytes({
      method: 'POST',
      path: '/token',
      headers: [
        ['Content-Type', 'application/json'],
        ['X-Forwarded-For', address],
      ],
      body: JSON.stringify({ username: TEST_USERNAME, password }),
    });
    const headEnd = bytes.indexOf('\r\n\r\n') + 4;
    return rawExchange(
      ports[i % ports.length]!,
      async (socket) => {
        socket.write(bytes.subarray(0, headEnd));
        if (++headersWritten === passwords.length) setTimeout(releaseBodies, holdBodiesMs);
        await bodiesMayGo;
        // Refused before its body (429 at once) and closed: nothing more to send. Not end():
        // Node's server drops a request still being answered when the client half-closes.
        if (!socket.destroyed) socket.write(bytes.subarray(headEnd));
      },
      { timeoutMs: 30_000 },
    );
  });
  return (await Promise.all(exchanges)).map((exchange, i) => {
    if (exchange.response === undefined) throw new Error(`login ${i} got no complete answer (${exchange.error ?? 'closed'}): ${exchange.received.toString('latin1').slice(0, 200)}`);
    return exchange.response;
  });
}

/** How many answers had each status, e.g. {401: 5, 429: 195}: the line a failure message shows. */
export function countStatuses(answers: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const { status } of answers) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

/**
 * The answers to concurrent wrong-password logins from one address: at most `limit` of them
 * 401 (password outcomes revealed), every other one 429 with a Retry-After within the window.
 */
export function expectAtMostLimitRevealed(answers: readonly RawResponse[], limit: number): void {
  const counts = countStatuses(answers);
  expect(counts[401] ?? 0, JSON.stringify(counts)).toBeLessThanOrEqual(limit);
  expect((counts[401] ?? 0) + (counts[429] ?? 0), JSON.stringify(counts)).toBe(answers.length);
  for (const answer of answers.filter((candidate) => candidate.status === 429)) {
    expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(answer.headers['retry-after'])).toBeLessThanOrEqual(60);
  }
}
