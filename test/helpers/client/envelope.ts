// The one envelope check: every response, success or failure, is the JSON envelope
// {status, message, data} with status equal to the HTTP status; an error has data null and
// one of the fixed messages. expectEnvelope() also checks the exact status, message and data;
// expectSuccessData() the shape of a success's data (a book, a list, a token).
import { STATUS_CODES } from 'node:http';
import { expect } from 'vitest';
import type { RawResponse } from './raw-http.js';
import type { ApiResponse } from './api-client.js';
import type { Book } from './books.js';

/** A response from the test client (api-client.ts) or from a raw socket (raw-http.ts). */
export type AnyResponse = ApiResponse | RawResponse;

function normalize(response: AnyResponse): RawResponse {
  if (!(response.headers instanceof Headers)) return response as RawResponse;
  const { status, text } = response as ApiResponse;
  return { status, headers: Object.fromEntries(response.headers.entries()), body: text };
}

/** Every fixed message of docs/api.md and the README; an error body carries one of these. */
export const FIXED_MESSAGES = new Set([
  'Token generated successfully',
  'Invalid request payload',
  'Invalid credentials',
  'Could not generate token',
  'Book created successfully',
  'Books retrieved successfully',
  'Book retrieved successfully',
  'Book updated successfully',
  'Book deleted successfully',
  'Invalid input',
  'Invalid If-Match header',
  'Invalid If-None-Match header',
  'Invalid limit: expected an integer from 1 to 1000',
  'Invalid sort: expected id, title, author or year, optionally prefixed by -',
  'Invalid q: at most 200 characters and 10 terms',
  'Invalid cursor: not issued by this service',
  'Invalid cursor: issued for another sort or search',
  'Book not found',
  'Authorization token required',
  'Invalid token',
  'Route not found',
  'Method not allowed',
  'Request body too large',
  'Too many requests',
  'Service unavailable',
  'Internal server error',
  'Bad request',
  'Request timeout',
  'Service is alive',
  'Service is ready',
]);

export const ENVELOPE_KEYS = ['data', 'message', 'status'];
export const BOOK_KEYS = ['author', 'id', 'title', 'year'];

export interface Envelope {
  status: number;
  message: string;
  data: unknown;
}

/**
 * The response is the JSON envelope: Content-Type application/json, exactly
 * {status, message, data}, status == HTTP status, never 5xx; an error has data null and a
 * fixed message (one of ours, or Node's reason phrase for a status the service does not name).
 * `allowServerError` is for the tests that break the store on purpose.
 */
export function expectEnvelopeShape(answer: AnyResponse, context = '', { allowServerError = false } = {}): Envelope {
  const response = normalize(answer);
  const where = `\nHTTP ${response.status} ${JSON.stringify(response.headers)} ${JSON.stringify(response.body.slice(0, 500))}\n${context}`;
  if (!allowServerError) expect(response.status, `5xx${where}`).toBeLessThan(500);
  expect(response.headers['content-type'] ?? '(no Content-Type header)', `content-type${where}`).toMatch(/^application\/json(;|$)/);
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    throw new Error(`body is not JSON${where}`);
  }
  expect(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), `not an object${where}`).toBe(true);
  const envelope = parsed as Envelope;
  expect(Object.keys(envelope).sort(), `envelope keys${where}`).toEqual(ENVELOPE_KEYS);
  expect(envelope.status, `envelope status${where}`).toBe(response.status);
  expect(typeof envelope.message, `message type${where}`).toBe('string');
  if (response.status >= 400) {
    expect(envelope.data, `error data${where}`).toBeNull();
    const known = FIXED_MESSAGES.has(envelope.message) || envelope.message === STATUS_CODES[response.status];
    expect(known, `unknown error message "${envelope.message}"${where}`).toBe(true);
  }
  return envelope;
}

/** The envelope, with exactly this status, message and data. */
export function expectEnvelope(response: AnyResponse, status: number, message: string, data: unknown): Envelope {
  const envelope = expectEnvelopeShape(response, '', { allowServerError: status >= 500 });
  expect(response.status).toBe(status);
  expect(envelope).toEqual({ status, message, data });
  return envelope;
}

/** A book object with exactly id, title, author, year and the right types. */
export function expectBook(value: unknown, context = ''): Book {
  expect(value !== null && typeof value === 'object' && !Array.isArray(value), `book is not an object ${context}`).toBe(true);
  const book = value as Book;
  expect(Object.keys(book).sort(), `book keys ${context}`).toEqual(BOOK_KEYS);
  expect(Number.isInteger(book.id) && book.id > 0, `book id ${context}`).toBe(true);
  expect(typeof book.title, `book title ${context}`).toBe('string');
  expect(typeof book.author, `book author ${context}`).toBe('string');
  expect(Number.isInteger(book.year), `book year ${context}`).toBe(true);
  return book;
}

/** Checks the data of a 2xx envelope against the shape of its operation. */
export function expectSuccessData(envelope: Envelope, operation: 'token' | 'book' | 'books' | 'null', context = ''): void {
  switch (operation) {
    case 'token': {
      const data = envelope.data as Record<string, unknown>;
      expect(data !== null && typeof data === 'object' && !Array.isArray(data), `token data ${context}`).toBe(true);
      expect(Object.keys(data), `token data keys ${context}`).toEqual(['token']);
      expect(typeof data.token, `token type ${context}`).toBe('string');
      return;
    }
    case 'book':
      expectBook(envelope.data, context);
      return;
    case 'books':
      expect(Array.isArray(envelope.data), `books data ${context}`).toBe(true);
      for (const book of envelope.data as unknown[]) expectBook(book, context);
      return;
    case 'null':
      expect(envelope.data, `data ${context}`).toBeNull();
  }
}
