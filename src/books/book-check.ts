// A book's fields as a person or a file gives them (text), checked against the service's own
// limits before anything is sent (docs/api.md "Validation"): the web page's forms, its import and
// `book-service import` apply the same rules and say what is wrong in the same words. Compiled
// for the browser too (web/tsconfig.json), so it imports nothing but book.ts.
import { BOOK_FIELDS, BOOK_TEXT_MAX_LENGTH, BOOK_YEAR_MAX, BOOK_YEAR_MIN, type BookFields } from './book.js';

export type Field = (typeof BOOK_FIELDS)[number];

/** What is wrong with each field, as a sentence ("Year is required."). */
export type FieldErrors = Partial<Record<Field, string>>;

/** The fields as text, as a form or a CSV row holds them. */
export type FormValues = Record<Field, string>;

export const FIELD_LABELS: Record<Field, string> = { title: 'Title', author: 'Author', year: 'Year' };

/** A lone UTF-16 surrogate or NUL: no store keeps them, the service refuses them. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

/** The book fields the values make, or what is wrong with each field. */
export function readFields(values: FormValues): { fields: BookFields; errors: FieldErrors } {
  const errors: FieldErrors = {};
  for (const field of ['title', 'author'] as const) {
    const problem = textProblem(values[field]);
    if (problem) errors[field] = `${FIELD_LABELS[field]} ${problem}.`;
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
