// Books in a file: reading a JSON or CSV file someone wants to import (the web page's import and
// `book-service import FILE`), and writing the collection as either for export. Every row is
// checked as a form is (book-check.ts); a row that fails is reported with its line (CSV) or its
// place in the array (JSON) and the reasons, never sent. Compiled for the browser too
// (web/tsconfig.json), so it imports nothing outside src/books/.
//
// JSON: the array GET /books answers with (its envelope `{"status", "message", "data": [...]}`
// is taken too); each element an object with `title`, `author` and `year`; `id` and any other
// member are ignored (an import creates new books).
// CSV (RFC 4180): a first line naming the columns, `title`, `author` and `year` among them in any
// order (other columns, such as `id`, are ignored); values separated by commas, quoted with `"`
// when they hold a comma, a quote (doubled) or a line break.
import { BOOK_FIELDS, type BookFields } from './book.js';
import { readFields, type FieldErrors, type FormValues } from './book-check.js';

export type BookFileFormat = 'json' | 'csv';

/** A row that becomes a book: where it is in the file, and its fields. */
export interface BookRow {
  /** CSV: the line the row starts on (the header is line 1). JSON: the element's place, from 1. */
  position: number;
  fields: BookFields;
}

/** A row that cannot become a book, and why (one sentence per field: "Year is required."). */
export interface InvalidRow {
  position: number;
  problems: string[];
}

export interface BookFile {
  format: BookFileFormat;
  /** How `position` counts: lines of a CSV file, elements of a JSON array. */
  positionName: 'line' | 'element';
  rows: BookRow[];
  invalid: InvalidRow[];
}

/** The file as a whole cannot be read (not JSON, no header naming the columns): one sentence. */
export class BookFileError extends Error {
  override name = 'BookFileError';
}

/** The file's format from its name (`.json`, `.csv`), else from its first character. */
export function bookFileFormat(name: string, text: string): BookFileFormat {
  if (/\.json$/i.test(name)) return 'json';
  if (/\.csv$/i.test(name)) return 'csv';
  return /^\s*[[{]/.test(withoutBom(text)) ? 'json' : 'csv';
}

export function readBookFile(text: string, format: BookFileFormat): BookFile {
  return format === 'json' ? readJsonFile(withoutBom(text)) : readCsvFile(withoutBom(text));
}

function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function sortRow(file: BookFile, position: number, { fields, errors }: { fields: BookFields; errors: FieldErrors }) {
  const problems = BOOK_FIELDS.flatMap((field) => errors[field] ?? []);
  if (problems.length > 0) file.invalid.push({ position, problems });
  else file.rows.push({ position, fields });
}

function readJsonFile(text: string): BookFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BookFileError('The file is not JSON: expected the array of books GET /books answers with.');
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { data?: unknown } | null)?.data;
  if (!Array.isArray(list)) throw new BookFileError('The JSON file holds no array of books: expected the array GET /books answers with.');
  const file: BookFile = { format: 'json', positionName: 'element', rows: [], invalid: [] };
  list.forEach((element: unknown, index) => {
    if (typeof element !== 'object' || element === null || Array.isArray(element)) {
      file.invalid.push({ position: index + 1, problems: ['It is not a book: expected an object with title, author and year.'] });
      return;
    }
    const { title, author, year } = element as Record<string, unknown>;
    const checked = readFields({ title: typeof title === 'string' ? title : '', author: typeof author === 'string' ? author : '', year: jsonYear(year) });
    for (const [field, value] of [['title', title], ['author', author]] as const) {
      if (value !== undefined && typeof value !== 'string') checked.errors[field] = `${field === 'title' ? 'Title' : 'Author'} must be text.`;
    }
    sortRow(file, index + 1, checked);
  });
  return file;
}

/** A JSON year as a form's text: a number's digits; anything else fails the form's check. */
function jsonYear(year: unknown): string {
  if (year === undefined || year === null) return '';
  return typeof year === 'number' ? String(year) : 'not a number';
}

function readCsvFile(text: string): BookFile {
  const records = csvRecords(text);
  const header = records.next();
  if (header.done) throw new BookFileError('The CSV file is empty: its first line must name the columns title, author and year.');
  const names = header.value.values.map((name) => name.trim().toLowerCase());
  const columns = BOOK_FIELDS.map((field) => names.indexOf(field));
  const missing = BOOK_FIELDS.filter((_, index) => columns[index] === -1);
  if (missing.length > 0) {
    throw new BookFileError(`The CSV file's first line names no ${missing.join(', ')} column: it must name the columns title, author and year.`);
  }
  const file: BookFile = { format: 'csv', positionName: 'line', rows: [], invalid: [] };
  for (const record of records) {
    if (record.values.length === 1 && record.values[0] === '') continue; // an empty line
    if (record.unclosedQuote) {
      file.invalid.push({ position: record.line, problems: ['A quoted value is not closed: the rest of the file was read as its text.'] });
      continue;
    }
    const [title, author, year] = columns.map((column) => record.values[column] ?? '') as [string, string, string];
    const values: FormValues = { title, author, year };
    sortRow(file, record.line, readFields(values));
  }
  return file;
}

interface CsvRecord {
  /** The line the record starts on, from 1. */
  line: number;
  values: string[];
  /** The file ended inside a quoted value. */
  unclosedQuote: boolean;
}

/** RFC 4180 records: commas between values, `"` quotes (`""` inside), CRLF or LF between records. */
function* csvRecords(text: string): Generator<CsvRecord> {
  let at = 0;
  let line = 1;
  while (at < text.length) {
    const record: CsvRecord = { line, values: [], unclosedQuote: false };
    for (;;) {
      let value = '';
      if (text[at] === '"') {
        at += 1;
        for (;;) {
          const quote = text.indexOf('"', at);
          if (quote === -1) {
            value += text.slice(at);
            at = text.length;
            record.unclosedQuote = true;
            break;
          }
          value += text.slice(at, quote);
          at = quote + 1;
          if (text[at] !== '"') break;
          value += '"';
          at += 1;
        }
        line += countLineBreaks(value);
        // Anything between the closing quote and the next comma or line end is kept, as spreadsheets do.
        const rest = nextSeparator(text, at);
        value += text.slice(at, rest);
        at = rest;
      } else {
        const end = nextSeparator(text, at);
        value = text.slice(at, end);
        at = end;
      }
      record.values.push(value);
      if (text[at] === ',') {
        at += 1;
        continue;
      }
      if (text[at] === '\r' && text[at + 1] === '\n') at += 1;
      if (at < text.length) at += 1; // the line break
      line += 1;
      break;
    }
    yield record;
  }
}

function nextSeparator(text: string, from: number): number {
  for (let at = from; at < text.length; at += 1) {
    const char = text[at];
    if (char === ',' || char === '\n' || char === '\r') return at;
  }
  return text.length;
}

function countLineBreaks(text: string): number {
  return text.match(/\r\n|\r|\n/g)?.length ?? 0;
}

/** A book as export writes it: the id as its exact digits (ids go beyond a double). */
export interface ExportedBook extends BookFields {
  id: string | bigint;
}

/** The collection as GET /books's array: one book a line, keys in the service's order. */
export function booksAsJson(books: Iterable<ExportedBook>): string {
  const lines: string[] = [];
  for (const { id, title, author, year } of books) {
    lines.push(`{"id":${id},"title":${JSON.stringify(title)},"author":${JSON.stringify(author)},"year":${year}}`);
  }
  return lines.length === 0 ? '[]\n' : `[\n${lines.join(',\n')}\n]\n`;
}

/** The collection as CSV: `id,title,author,year`, then a book a line (CRLF, as RFC 4180 writes). */
export function booksAsCsv(books: Iterable<ExportedBook>): string {
  let text = 'id,title,author,year\r\n';
  for (const { id, title, author, year } of books) text += `${id},${csvValue(title)},${csvValue(author)},${year}\r\n`;
  return text;
}

function csvValue(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}
