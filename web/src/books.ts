// What a book is on the page, and the rules the service checks, applied before anything is
// sent (docs/api.md "Validation"). Pure functions, no DOM. The fields, their limits and the
// checks are the service's own: src/books/book.ts and book-check.ts, which the browser loads as
// modules of their own (/ui/src/books/, web/tsconfig.json).
import { BOOK_FIELDS, BOOK_YEAR_MAX, BOOK_YEAR_MIN, type BookFields } from '../../src/books/book.js';
import type { Field } from '../../src/books/book-check.js';

export { readFields, type FieldErrors, type FormValues } from '../../src/books/book-check.js';
export type { BookFields, Field };

/** A stored book. The id is kept as its decimal text: ids go up to 2^63−1, beyond a double. */
export interface Book extends BookFields {
  id: string;
}

export const FIELDS: readonly Field[] = BOOK_FIELDS;
export type Column = 'id' | Field;

/** The year's range in words, as the forms' hint says it. */
export const YEAR_RANGE = `From ${BOOK_YEAR_MIN} to ${BOOK_YEAR_MAX}`;

/** The fields of `values` that differ from `book`: the body of a partial PUT. */
export function changedFields(book: Book, fields: BookFields): Partial<BookFields> {
  const changes: Partial<BookFields> = {};
  if (fields.title !== book.title) changes.title = fields.title;
  if (fields.author !== book.author) changes.author = fields.author;
  if (fields.year !== book.year) changes.year = fields.year;
  return changes;
}
