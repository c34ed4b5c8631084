// What the Idempotency-Key and conditional-request tests share (docs: issue 22's contract):
// the fixed answers those features add, their exact check, the headers they read and write,
// and requests with Idempotency-Key bytes that fetch() will not send.
import { expect } from 'vitest';
import type { ApiClient, ApiResponse } from './api-client.js';
import type { Book } from './books.js';
import { portOf, rawExchange, type RawResponse } from './raw-http.js';

export interface ErrorAnswer {
  status: number;
  message: string;
  data: null;
}

export const PRECONDITION_FAILED: ErrorAnswer = { status: 412, message: 'Precondition failed: the book has changed', data: null };
export const INVALID_IDEMPOTENCY_KEY: ErrorAnswer = { status: 400, message: 'Invalid Idempotency-Key header', data: null };
export const KEY_USED_FOR_ANOTHER_REQUEST: ErrorAnswer = { status: 422, message: 'Idempotency-Key already used for a different request', data: null };
export const KEY_IN_PROGRESS: ErrorAnswer = { status: 409, message: 'A request with this Idempotency-Key is still being processed', data: null };

/** An answer from the test client or from a raw socket. */
export type Answer = ApiResponse | RawResponse;

/** A header of either kind of answer (lower-case name), or undefined. */
export function headerOf(answer: Answer, name: string): string | undefined {
  if (answer.headers instanceof Headers) return answer.headers.get(name) ?? undefined;
  return answer.headers[name.toLowerCase()];
}

function textOf(answer: Answer): string {
  return 'text' in answer ? answer.text : answer.body;
}

/** Status, body text and headers in one line, for failure messages. */
export function describeAnswer(answer: Answer): string {
  const headers = answer.headers instanceof Headers ? Object.fromEntries(answer.headers.entries()) : answer.headers;
  return `HTTP ${answer.status} ${JSON.stringify(headers)} ${textOf(answer).slice(0, 300)}`;
}

/**
 * Exactly this JSON envelope, as application/json. (envelope.ts's expectEnvelope knows only the
 * messages that were there before these features.)
 */
export function expectAnswer(answer: Answer, expected: { status: number; message: string; data: unknown }, context = ''): void {
  const where = `${describeAnswer(answer)}${context ? `\n${context}` : ''}`;
  expect(answer.status, where).toBe(expected.status);
  expect(headerOf(answer, 'content-type') ?? '(no Content-Type)', where).toMatch(/^application\/json(;|$)/);
  expect(JSON.parse(textOf(answer)), where).toEqual(expected);
}

/** A strong entity tag as RFC 9110 writes one: `"…"` (a weak one starts with `W/`). */
const STRONG_ETAG = /^"[\x21\x23-\x7e\x80-\xff]*"$/;

/** The answer's ETag, which must be a strong one. */
export function strongEtagOf(answer: Answer): string {
  const etag = headerOf(answer, 'etag');
  expect(etag ?? '(no ETag header)', `strong ETag expected: ${describeAnswer(answer)}`).toMatch(STRONG_ETAG);
  return etag!;
}

/** True when the answer says it is a stored answer replayed (`Idempotent-Replayed: true`). */
export function isReplayed(answer: Answer): boolean {
  return headerOf(answer, 'idempotent-replayed') === 'true';
}

/** The books whose title is `title`, as GET /books lists them (tests give each write a unique title). */
export async function booksTitled(client: ApiClient, token: string, title: string): Promise<Book[]> {
  const response = await client.request('GET', '/books', { token });
  expect(response.status, response.text).toBe(200);
  return (response.body.data as Book[]).filter((book) => book.title === title);
}

/** How many books GET /books lists. */
export async function bookCount(client: ApiClient, token: string): Promise<number> {
  const response = await client.request('GET', '/books', { token });
  expect(response.status, response.text).toBe(200);
  return (response.body.data as Book[]).length;
}

/**
 * Builds one HTTP/1.1 request as bytes, with an `Idempotency-Key` header whose value is exactly
 * `keyBytes` (fetch() refuses or re-encodes some of them: non-ASCII, control characters, empty).
 */
export function requestBytes(method: string, path: string, { token, keyBytes, body }: { token?: string; keyBytes?: Buffer; body?: string }): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close'];
  if (token !== undefined) lines.push(`Authorization: ${token}`);
  if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
  const head = Buffer.from(`${lines.join('\r\n')}\r\n`, 'latin1');
  const key = keyBytes === undefined ? Buffer.alloc(0) : Buffer.concat([Buffer.from('Idempotency-Key: ', 'latin1'), keyBytes, Buffer.from('\r\n', 'latin1')]);
  return Buffer.concat([head, key, Buffer.from('\r\n', 'latin1'), Buffer.from(body ?? '', 'utf8')]);
}

/** Sends `requestBytes(…)` over a bare socket and returns the answer. */
export async function rawRequest(baseUrl: string, method: string, path: string, options: { token?: string; keyBytes?: Buffer; body?: string }): Promise<RawResponse> {
  const exchange = await rawExchange(portOf(baseUrl), (socket) => void socket.write(requestBytes(method, path, options)));
  if (exchange.response === undefined) {
    throw new Error(`${method} ${path}: no complete answer (closed: ${exchange.closed}, error: ${exchange.error}): ${exchange.received.toString('latin1').slice(0, 300)}`);
  }
  return exchange.response;
}
