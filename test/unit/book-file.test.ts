// src/books/book-file.ts and src/books/book-import.ts, outside HTTP: reading a JSON or CSV file of
// books (quoting, line ends, a BOM, the header's order and case, an unclosed quote, the envelope
// of GET /books, each invalid row's line or element), the export written back and read again, and
// an import's batches (at most 1,000 operations and IMPORT_BATCH_MAX_BYTES each, keys that depend
// only on the file's digest and the batch's place) and how runImport sends and retries them.
import { describe, expect, it } from 'vitest';
import { BATCH_MAX_OPERATIONS, type BookFields } from '../../src/books/book.js';
import { BookFileError, bookFileFormat, booksAsCsv, booksAsJson, readBookFile, type BookRow } from '../../src/books/book-file.js';
import { IMPORT_BATCH_MAX_BYTES, fileDigest, planImport, runImport, type BatchAnswer, type ImportBatch, type ImportProgress } from '../../src/books/book-import.js';

const csv = (text: string) => readBookFile(text, 'csv');
const json = (text: string) => readBookFile(text, 'json');
const rowsOf = (rows: BookRow[]) => rows.map((row) => [row.position, row.fields]);

describe('bookFileFormat', () => {
  it('by the name first, else by the first character', () => {
    expect(bookFileFormat('books.JSON', 'title,author,year')).toBe('json');
    expect(bookFileFormat('books.csv', '[]')).toBe('csv');
    expect(bookFileFormat('books.txt', '\uFEFF  [{"title":"a"}]')).toBe('json');
    expect(bookFileFormat('books', ' {"data":[]}')).toBe('json');
    expect(bookFileFormat('books', 'title,author,year')).toBe('csv');
  });
});

describe('reading a CSV file', () => {
  it('RFC 4180 quoting: commas, doubled quotes and line breaks inside quotes; each row by the line it starts on', () => {
    const file = csv('title,author,year\n"Dune, the first","Frank ""F."" Herbert",1965\n"Two\nlines",B,2000\nPlain,"C",-300\n');
    expect(file.format).toBe('csv');
    expect(file.positionName).toBe('line');
    expect(rowsOf(file.rows)).toEqual([
      [2, { title: 'Dune, the first', author: 'Frank "F." Herbert', year: 1965 }],
      [3, { title: 'Two\nlines', author: 'B', year: 2000 }],
      [5, { title: 'Plain', author: 'C', year: -300 }],
    ]);
    expect(file.invalid).toEqual([]);
  });

  it('CRLF, a lone CR, a BOM, no line end at the end, empty lines ignored', () => {
    const file = csv('\uFEFFtitle,author,year\r\nA,B,1\r\n\r\n"C\r\nD",E,2\rF,G,3');
    expect(rowsOf(file.rows)).toEqual([
      [2, { title: 'A', author: 'B', year: 1 }],
      [4, { title: 'C\r\nD', author: 'E', year: 2 }],
      [6, { title: 'F', author: 'G', year: 3 }],
    ]);
    expect(file.invalid).toEqual([]);
  });

  it('the header: any order and case, spaces around the names, other columns (id) ignored', () => {
    const file = csv(' Year ,ID,AUTHOR,Title,notes\n1965,17,Herbert,Dune,"anything, at all"\n');
    expect(rowsOf(file.rows)).toEqual([[2, { title: 'Dune', author: 'Herbert', year: 1965 }]]);
  });

  it('values keep their spaces (as a form does); the year may have spaces around it', () => {
    expect(rowsOf(csv('title,author,year\n  Spaced  , A ,  1965 \n').rows)).toEqual([[2, { title: '  Spaced  ', author: ' A ', year: 1965 }]]);
  });

  it('invalid rows: each with its line and every problem, in the forms’ words; the valid rows around them kept', () => {
    const file = csv('title,author,year\nA,B,1965\n,B,19x5\n"x\ny",B,10000\nC,,\nD,E\nF,G,2000\n');
    expect(file.invalid).toEqual([
      { position: 3, problems: ['Title is required.', 'Year must be a whole number, such as 1965 or -300.'] },
      { position: 4, problems: ['Year must be from -9999 to 9999.'] },
      { position: 6, problems: ['Author is required.', 'Year is required.'] },
      { position: 7, problems: ['Year is required.'] },
    ]);
    expect(rowsOf(file.rows)).toEqual([
      [2, { title: 'A', author: 'B', year: 1965 }],
      [8, { title: 'F', author: 'G', year: 2000 }],
    ]);
  });

  it('a quote left open: that row is invalid (the rest of the file was its text), the rows before it kept', () => {
    const file = csv('title,author,year\nA,B,1\n"Open,B,2\nC,D,3\n');
    expect(rowsOf(file.rows)).toEqual([[2, { title: 'A', author: 'B', year: 1 }]]);
    expect(file.invalid).toEqual([{ position: 3, problems: ['A quoted value is not closed: the rest of the file was read as its text.'] }]);
  });

  it('a file that cannot be read at all is a BookFileError: empty, or no title/author/year column', () => {
    expect(() => csv('')).toThrow(BookFileError);
    expect(() => csv('')).toThrow('The CSV file is empty');
    expect(() => csv('name,writer,year\nA,B,1\n')).toThrow("names no title, author column");
    expect(() => csv('\uFEFF')).toThrow(BookFileError);
  });
});

describe('reading a JSON file', () => {
  it('the array GET /books answers, or its whole envelope; id and other members ignored', () => {
    const books = '[{"id":9007199254740993,"title":"Dune","author":"Frank Herbert","year":1965,"extra":true}]';
    expect(rowsOf(json(books).rows)).toEqual([[1, { title: 'Dune', author: 'Frank Herbert', year: 1965 }]]);
    expect(rowsOf(json(`{"status":200,"message":"Books retrieved successfully","data":${books}}`).rows)).toEqual([[1, { title: 'Dune', author: 'Frank Herbert', year: 1965 }]]);
    expect(json('\uFEFF[]')).toEqual({ format: 'json', positionName: 'element', rows: [], invalid: [] });
  });

  it('invalid elements by their place from 1: not an object, text that is not text, a year that is not a whole number', () => {
    const file = json(
      JSON.stringify([
        { title: 'A', author: 'B', year: 1 },
        'a string',
        null,
        [1, 2],
        { title: 5, author: 'B', year: 1 },
        { title: 'A', year: 1 },
        { title: 'A', author: 'B', year: '1965' },
        { title: 'A', author: 'B', year: 1965.5 },
        { title: 'A', author: 'B', year: null },
        { title: 'A', author: 'B', year: -9999 },
      ]),
    );
    const notABook = ['It is not a book: expected an object with title, author and year.'];
    expect(file.invalid).toEqual([
      { position: 2, problems: notABook },
      { position: 3, problems: notABook },
      { position: 4, problems: notABook },
      { position: 5, problems: ['Title must be text.'] },
      { position: 6, problems: ['Author is required.'] },
      { position: 7, problems: ['Year must be a whole number, such as 1965 or -300.'] },
      { position: 8, problems: ['Year must be a whole number, such as 1965 or -300.'] },
      { position: 9, problems: ['Year is required.'] },
    ]);
    expect(file.rows.map((row) => row.position)).toEqual([1, 10]);
  });

  it('not JSON, or JSON without an array of books: a BookFileError', () => {
    expect(() => json('[{"title":')).toThrow('The file is not JSON');
    for (const text of ['{}', 'null', '42', '{"data":{}}']) expect(() => json(text), text).toThrow(BookFileError);
  });
});

describe('export, read back', () => {
  const books = [
    { id: '9223372036854775807', title: 'Commas, "quotes" and\r\nline breaks', author: ' Spaced, Author ', year: -9999 },
    { id: 2n ** 53n + 1n, title: ' Leading space', author: 'Émile 📚', year: 0 },
    { id: '3', title: '"', author: ',', year: 9999 },
    { id: '4', title: 'Lone\rCR and\nLF', author: 'x', year: 1 },
    { id: '5', title: 'Only a lone\rCR', author: 'y', year: 2 },
  ];
  const fields = books.map(({ title, author, year }) => ({ title, author, year }));

  it('CSV: id,title,author,year with CRLF, quoted where needed; read back to the same books', () => {
    const text = booksAsCsv(books);
    expect(text.startsWith('id,title,author,year\r\n9223372036854775807,"Commas, ""quotes"" and\r\nline breaks"," Spaced, Author ",-9999\r\n')).toBe(true);
    expect(text).toContain('\r\n9007199254740993, Leading space,Émile 📚,0\r\n');
    const file = csv(text);
    expect(file.invalid).toEqual([]);
    expect(file.rows.map((row) => row.fields)).toEqual(fields);
    expect(booksAsCsv([])).toBe('id,title,author,year\r\n');
  });

  it('JSON: the ids as exact integers, read back to the same books', () => {
    const text = booksAsJson(books);
    expect(text).toContain('{"id":9223372036854775807,"title":');
    expect(text).toContain('{"id":9007199254740993,"title":');
    expect(json(text).rows.map((row) => row.fields)).toEqual(fields);
    expect(booksAsJson([])).toBe('[]\n');
  });
});

describe('planImport', () => {
  const rows = (count: number, fields: (index: number) => BookFields = (index) => ({ title: `Book ${index}`, author: 'A', year: 2000 })) =>
    Array.from({ length: count }, (_, index) => ({ position: index + 2, fields: fields(index) }));

  it('batches of at most 1,000 creates, in file order, each body the POST /batch body; keys from the digest and the place', () => {
    const plan = planImport(rows(2_500), 'abc');
    expect(plan.books).toBe(2_500);
    expect(plan.batches.map((batch) => batch.rows.length)).toEqual([BATCH_MAX_OPERATIONS, BATCH_MAX_OPERATIONS, 500]);
    expect(plan.batches.map((batch) => batch.idempotencyKey)).toEqual(['import-abc-1-of-3', 'import-abc-2-of-3', 'import-abc-3-of-3']);
    expect(plan.batches.map((batch) => batch.number)).toEqual([1, 2, 3]);
    const body = JSON.parse(plan.batches[2]?.body ?? '') as { operations: Array<{ method: string; path: string; body: BookFields }> };
    expect(body.operations).toHaveLength(500);
    expect(body.operations[0]).toEqual({ method: 'POST', path: '/book', body: { title: 'Book 2000', author: 'A', year: 2000 } });
    expect(planImport(rows(1_000), 'abc').batches).toHaveLength(1);
    expect(planImport([], 'abc')).toEqual({ batches: [], books: 0 });
  });

  it('the same rows and digest make the same batches and keys; another digest other keys', () => {
    const once = planImport(rows(1_500), 'd1');
    expect(planImport(rows(1_500), 'd1')).toEqual(once);
    expect(planImport(rows(1_500), 'd2').batches.map((batch) => batch.idempotencyKey)).toEqual(['import-d2-1-of-2', 'import-d2-2-of-2']);
  });

  it('long books of 4-byte characters: a batch is cut before IMPORT_BATCH_MAX_BYTES of JSON, well within the 4 MiB body limit', () => {
    const plan = planImport(rows(1_000, (index) => ({ title: '📚'.repeat(499) + String(index % 10), author: '😀'.repeat(500), year: 1 })), 'big');
    expect(plan.batches.length).toBe(2);
    for (const batch of plan.batches) expect(new TextEncoder().encode(batch.body).length).toBeLessThan(IMPORT_BATCH_MAX_BYTES + 100);
    expect(plan.batches.reduce((sum, batch) => sum + batch.rows.length, 0)).toBe(1_000);
  });

  it('fileDigest: 32 hex digits of SHA-256, the same for the same text', async () => {
    const digest = await fileDigest('title,author,year\n');
    expect(digest).toMatch(/^[0-9a-f]{32}$/);
    expect(await fileDigest('title,author,year\n')).toBe(digest);
    expect(await fileDigest('title,author,year\r\n')).not.toBe(digest);
    // A browser's File.text() drops a BOM, Node's readFile keeps it: the page and the command must agree.
    expect(await fileDigest('\uFEFFtitle,author,year\n')).toBe(digest);
  });
});

describe('runImport', () => {
  const plan = planImport(
    Array.from({ length: 2_500 }, (_, index) => ({ position: index + 2, fields: { title: `B${index}`, author: 'A', year: 1 } })),
    'k',
  );
  const ok = (replayed = false): BatchAnswer => ({ status: 200, message: 'Batch applied', data: [], replayed });

  it('sends every batch in order; a lost answer and a 503 are sent again with the same key; replays counted', async () => {
    const sent: string[] = [];
    const seen: ImportProgress[] = [];
    let failures = 0;
    const outcome = await runImport(
      plan,
      async (batch: ImportBatch) => {
        sent.push(batch.idempotencyKey);
        if (batch.number === 2 && failures === 0) {
          failures++;
          throw new TypeError('Failed to fetch');
        }
        if (batch.number === 2 && failures === 1) {
          failures++;
          return { status: 503, message: 'Service unavailable', data: null, replayed: false };
        }
        return ok(batch.number === 2);
      },
      { firstWaitMs: 1, onProgress: (progress) => seen.push(structuredClone(progress)) },
    );
    expect(outcome).toEqual({ kind: 'done', progress: { batchesDone: 3, batchesReplayed: 1, booksDone: 2_500 } });
    expect(sent).toEqual(['import-k-1-of-3', 'import-k-2-of-3', 'import-k-2-of-3', 'import-k-2-of-3', 'import-k-3-of-3']);
    expect(seen.map((progress) => progress.retrying?.reason ?? progress.batchesDone)).toEqual([1, 'no answer (Failed to fetch)', '503 Service unavailable', 2, 3]);
    expect(seen[1]?.retrying).toMatchObject({ batch: 2, attempt: 1, waitMs: 1 });
    expect(seen[2]?.retrying).toMatchObject({ batch: 2, attempt: 2, waitMs: 2 });
  });

  it('a batch not applied (422) stops the import at once, naming the row the service refused; the batches before it count', async () => {
    const outcome = await runImport(plan, async (batch) =>
      batch.number === 2 ? { status: 422, message: 'Batch not applied: an operation failed, nothing was written', data: { operation: 3, status: 400, message: 'Invalid input' }, replayed: false } : ok(),
    );
    expect(outcome.kind).toBe('stopped');
    if (outcome.kind !== 'stopped') return;
    expect(outcome.batch.number).toBe(2);
    expect(outcome.progress).toEqual({ batchesDone: 1, batchesReplayed: 0, booksDone: 1_000 });
    // Row 1,003 of the file (position 1,005: the header is line 1, the rows from line 2).
    expect(outcome.reason).toBe('422 Batch not applied: an operation failed, nothing was written: the book at position 1005 was refused (400 Invalid input)');
  });

  it('no answer after every try: stopped, with the reason; Retry-After is the wait when given', async () => {
    const waits: number[] = [];
    const outcome = await runImport(plan, async () => ({ status: 429, message: 'Too many requests', data: null, retryAfter: 0, replayed: false }), {
      attempts: 3,
      onProgress: (progress) => waits.push(progress.retrying?.waitMs ?? -1),
    });
    expect(outcome).toMatchObject({ kind: 'stopped', reason: '429 Too many requests', progress: { batchesDone: 0 } });
    expect(waits).toEqual([0, 0]);
  });

  it('aborted: the abort is thrown, nothing more is sent', async () => {
    const controller = new AbortController();
    let sends = 0;
    const running = runImport(
      plan,
      async () => {
        sends++;
        controller.abort(new Error('stopped'));
        throw new TypeError('Failed to fetch');
      },
      { signal: controller.signal },
    );
    await expect(running).rejects.toThrow('Failed to fetch');
    expect(sends).toBe(1);
  });
});
