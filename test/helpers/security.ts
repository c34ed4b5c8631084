// Shared checks for the security suites: the book and success-data shapes, and a tripwire
// for prototype pollution of this process (the service under test runs in the same process
// as the tests). The envelope check itself is in envelope.ts.
import { expect } from 'vitest';
import { BOOK_KEYS, type BookData, type Envelope } from './envelope.js';

/** A book object with exactly id, title, author, year and the right types. */
export function expectBook(value: unknown, context = ''): BookData {
  expect(value !== null && typeof value === 'object' && !Array.isArray(value), `book is not an object ${context}`).toBe(true);
  const book = value as BookData;
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

const OBJECT_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort();
const ARRAY_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Array.prototype).sort();
const FUNCTION_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Function.prototype).sort();

/** Object.prototype, Array.prototype and Function.prototype of this process are as they were at load. */
export function expectPrototypesUntouched(context = ''): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort(), `Object.prototype polluted ${context}`).toEqual(OBJECT_PROTOTYPE_KEYS);
  expect(Object.getOwnPropertyNames(Array.prototype).sort(), `Array.prototype polluted ${context}`).toEqual(ARRAY_PROTOTYPE_KEYS);
  expect(Object.getOwnPropertyNames(Function.prototype).sort(), `Function.prototype polluted ${context}`).toEqual(FUNCTION_PROTOTYPE_KEYS);
  const probe: Record<string, unknown> = {};
  for (const key of ['polluted', 'isAdmin', 'title', 'author', 'year', 'id', 'extra']) {
    expect(probe[key], `({}).${key} is inherited ${context}`).toBeUndefined();
  }
}
