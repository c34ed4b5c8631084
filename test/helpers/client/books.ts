// The one book type of the tests, and `:id` values that are not a book.
import type { BookFields } from '../../../src/books/book.js';

/**
 * A book as tests read it over HTTP: the service's own fields (src/books/book.ts), with the id
 * as JSON.parse gives it, a number (the service's StoredBook holds a bigint; read a response's
 * text for ids above 2^53).
 */
export interface Book extends BookFields {
  id: number;
}

/**
 * `:id` values that are not a positive decimal integer within the 64-bit id range, as path
 * segments (already URL-encoded where needed). Built around an existing id, so a lenient
 * parser (parseInt, Number, truncation to 64 bits) would find that book instead of 404.
 */
export const INVALID_IDS: Array<[string, (id: number) => string]> = [
  ['non-numeric "abc"', () => 'abc'],
  ['zero', () => '0'],
  ['many zeros', () => '0000'],
  ['negative -1', () => '-1'],
  ['the negated existing id', (id) => `-${id}`],
  ['a decimal fraction (existing id + ".5")', (id) => `${id}.5`],
  ['1.5', () => '1.5'],
  ['existing id with a trailing letter', (id) => `${id}abc`],
  ['exponent notation (existing id + "e0")', (id) => `${id}e0`],
  ['hexadecimal of the existing id', (id) => `0x${id.toString(16)}`],
  ['a 30-digit number', () => '123456789012345678901234567890'],
  ['2^63 (just beyond the signed 64-bit range)', () => '9223372036854775808'],
  ['2^64 + existing id (wraps to it modulo 2^64)', (id) => (2n ** 64n + BigInt(id)).toString()],
  ['a 1000-digit number', () => '9'.repeat(1000)],
  ['a URL-encoded space before the id', (id) => `%20${id}`],
  ['an undecodable percent escape', () => '%zz'],
  ['"null"', () => 'null'],
  ['"NaN"', () => 'NaN'],
  ['"Infinity"', () => 'Infinity'],
  ['an SQL-looking id', (id) => `${id}%20OR%201%3D1`],
];
