// Calls to the service's JSON API (docs/api.md), from the page's own origin. Every answer is the
// envelope `{status, message, data}`; this returns it whole so the page can show the message.
import type { Book } from './books.js';

export interface Answer<T = unknown> {
  status: number;
  message: string;
  data: T;
  /** Seconds from `Retry-After` (429), if the answer carried one. */
  retryAfter: number | undefined;
  /** The service's clock when it answered (`Date`), in milliseconds since the epoch. */
  date: number | undefined;
  /** The book's version (`ETag`, opaque), sent back as `If-Match` so a write never undoes another's. */
  etag: string | undefined;
  /** Every header of the answer (a list page's `Link`, `X-Total-Count`). */
  headers: Headers;
}

/** The service could not be reached, or answered something that is not the envelope. */
export class NetworkError extends Error {
  override name = 'NetworkError';
}

/** A body already written as JSON text (an import's batch, src/books/book-import.ts): sent as it is. */
export class JsonText {
  constructor(readonly text: string) {}
}

type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

/**
 * Ids travel as exact JSON integers up to 2^63−1 (docs/api.md "Ids"); a double would round those
 * above 2^53, and the page would then edit or delete another book. Each `id` is kept as the
 * digits the service wrote (JSON.parse's source text access, Chromium 114+), or, where a browser
 * lacks it, as the double's digits.
 */
const keepIdDigits: Reviver = (key, value, context) =>
  key === 'id' && typeof value === 'number' ? (context?.source ?? String(value)) : value;

/** JSON from the service, each `id` kept as its digits (throws on text that is not JSON). */
export function readJson(text: string): unknown {
  return JSON.parse(text, keepIdDigits as Parameters<typeof JSON.parse>[1]);
}

export async function call<T = unknown>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  {
    token,
    body,
    extraHeaders,
    signal,
  }: { token?: string | undefined; body?: unknown; extraHeaders?: Record<string, string> | undefined; signal?: AbortSignal | undefined } = {},
): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...extraHeaders, accept: 'application/json' };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let text: string;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? null : body instanceof JsonText ? body.text : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
      signal: signal ?? null,
    });
    text = await response.text();
  } catch (error) {
    // Called off by the page (a newer list request replaced this one): not a network failure.
    if (signal?.aborted) throw error;
    throw new NetworkError('The service could not be reached. Check the connection and try again.');
  }
  let parsed: unknown;
  try {
    parsed = readJson(text);
  } catch {
    throw new NetworkError(`The service answered HTTP ${response.status} without its usual JSON.`);
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as { message?: unknown }).message !== 'string') {
    throw new NetworkError(`The service answered HTTP ${response.status} without its usual JSON.`);
  }
  const envelope = parsed as { message: string; data?: unknown };
  const retryAfter = Number(response.headers.get('retry-after') ?? Number.NaN);
  const date = Date.parse(response.headers.get('date') ?? '');
  return {
    status: response.status,
    message: envelope.message,
    data: envelope.data as T,
    retryAfter: Number.isFinite(retryAfter) && retryAfter >= 0 ? Math.ceil(retryAfter) : undefined,
    date: Number.isFinite(date) ? date : undefined,
    etag: response.headers.get('etag') ?? undefined,
    headers: response.headers,
  };
}

/** A book as the service sent it, checked field by field (the page never trusts a shape). */
export function asBook(value: unknown): Book | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { id, title, author, year } = value as Record<string, unknown>;
  if (typeof id !== 'string' || !/^\d+$/.test(id)) return undefined;
  if (typeof title !== 'string' || typeof author !== 'string' || typeof year !== 'number') return undefined;
  return { id, title, author, year };
}
