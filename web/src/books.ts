// What a book is on the page, and the rules the service checks, applied before anything is
// sent (docs/api.md "Validation"). Pure functions, no DOM. The fields and their limits are the
// service's own: imported from src/books/book.ts, which the browser loads as a module of its own
// (/ui/src/books/book.js, web/tsconfig.json).
import { BOOK_FIELDS, BOOK_TEXT_MAX_LENGTH, BOOK_YEAR_MAX, BOOK_YEAR_MIN, type BookFields } from '../../src/books/book.js';

export type { BookFields };

/** A stored book. The id is kept as its decimal text: ids go up to 2^63−1, beyond a double. */
export interface Book extends BookFields {
  id: string;
}

export type Field = (typeof BOOK_FIELDS)[number];
export const FIELDS: readonly Field[] = BOOK_FIELDS;
export type Column = 'id' | Field;

/** The year's range in words, as the forms' hint says it. */
export const YEAR_RANGE = `From ${BOOK_YEAR_MIN} to ${BOOK_YEAR_MAX}`;

const LABELS: Record<Field, string> = { title: 'Title', author: 'Author', year: 'Year' };
/** A lone UTF-16 surrogate or NUL: no store keeps them, the service refuses them. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

export type FieldErrors = Partial<Record<Field, string>>;

/** What the person typed, as the form holds it. */
export type FormValues = Record<Field, string>;

/** The book fields a form's values make, or what is wrong with each field. */
export function readFields(values: FormValues): { fields: BookFields; errors: FieldErrors } {
  const errors: FieldErrors = {};
  for (const field of ['title', 'author'] as const) {
    const problem = textProblem(values[field]);
    if (problem) errors[field] = `${LABELS[field]} ${problem}.`;
  }
  const yearText = values.year.trim();
  let year = Number.NaN;
  if (yearText === '') errors.year = 'Year is required.';
  else if (!/^-?\d+$/.test(yearText)) errors.year = 'Year must be a whole number, such as 1965 or -300.';
  else {
    year = Number(yearText);
    if (year < BOOK_YEAR_MIN || year > BOOK_YEAR_MAX) errors.year = `Year must be from ${BOOK_YEAR_MIN} to ${BOOK_YEAR_MAX}.`;
  }
  return { fields: { title: values.title, author: values.author, year }, errors };
}

function textProblem(text: string): string | undefined {
  if (text.trim() === '') return 'is required';
  // The service counts characters as JSON Schema does: code points, not UTF-16 units.
  const length = [...text].length;
  if (length > BOOK_TEXT_MAX_LENGTH) return `must be at most ${BOOK_TEXT_MAX_LENGTH} characters (it has ${length})`;
  if (UNSTORABLE.test(text)) return 'holds a character that cannot be stored';
  return undefined;
}

/** The fields of `values` that differ from `book`: the body of a partial PUT. */
export function changedFields(book: Book, fields: BookFields): Partial<BookFields> {
  const changes: Partial<BookFields> = {};
  if (fields.title !== book.title) changes.title = fields.title;
  if (fields.author !== book.author) changes.author = fields.author;
  if (fields.year !== book.year) changes.year = fields.year;
  return changes;
}
