// The served OpenAPI document is enough for a typed client, as it is: @hey-api/openapi-ts
// (a devDependency; nothing is downloaded) generates a fetch client from GET /openapi.json;
// a small client program written against it, with no type cast, no `any` and no non-null
// assertion, type-checks under `strict` with zero diagnostics, then runs against the service:
// login → create with an Idempotency-Key → the same again (replayed, same book) → the key with
// another body (422) → list → get (ETag) → update with If-Match → the same If-Match again (412)
// → two pages of one book by -year, the second through the Link header's cursor, and a bad limit
// (400) → a batch (a create and a delete) and one that is not applied (422, which operation) →
// delete → get answers 404 "Book not found". Header and query parameters and the new statuses
// are typed.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '@hey-api/openapi-ts';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Messages } from '../../src/http/envelope.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../helpers/client/test-account.js';
import { useService } from '../helpers/service/start-service.js';

const run = promisify(execFile);

/**
 * The client program, as a consumer of the generated client writes it. It uses the generated
 * functions (named after the operationIds) and types; `Book.id` is a number, so `book.id` goes
 * straight into the path parameter. The annotated constants are compile-time checks: each
 * envelope's status and message are literal types, narrowed by the status.
 */
const CLIENT_PROGRAM = `
import { createClient } from './generated/client/index.js';
import {
  applyBatch,
  createBook,
  createToken,
  deleteBook,
  getBook,
  listBooks,
  updateBook,
  type Book,
  type BatchNotAppliedResponse,
  type BookNotFoundResponse,
  type InvalidLimitResponse,
  type IdempotencyKeyReusedResponse,
  type PreconditionFailedResponse,
} from './generated/index.js';

export interface Outcome {
  token: { status: number; message: 'Token generated successfully' };
  created: { status: 201; message: 'Book created successfully'; book: Book };
  replayed: { status: 201; id: number; header: string | null };
  keyReused: { status: 422; message: 'Idempotency-Key already used for a different request' };
  stale: { status: 412; message: 'Precondition failed: the book has changed' };
  listed: { status: 200; message: 'Books retrieved successfully'; books: Book[] };
  read: { status: 200; message: 'Book retrieved successfully'; book: Book };
  updated: { status: 200; message: 'Book updated successfully'; book: Book };
  pages: { first: Book[]; total: string | null; second: Book[]; last: boolean };
  badLimit: { status: 400; message: 'Invalid limit: expected an integer from 1 to 1000' };
  deleted: { status: 200; message: 'Book deleted successfully'; data: null };
  gone: { httpStatus: number; status: 404; message: 'Book not found' };
  batch: { status: 200; message: 'Batch applied'; answers: number[] };
  notApplied: { status: 422; operation: number; failed: number; message: string };
}

function fail(step: string, response: Response): never {
  throw new Error(step + ': HTTP ' + response.status);
}

export async function run(baseUrl: string, username: string, password: string): Promise<Outcome> {
  const api = createClient({ baseUrl });

  const login = await createToken({ client: api, body: { username, password } });
  if (login.data === undefined) fail('POST /token', login.response);
  const token: string = login.data.data.token;
  // The token security scheme: the client sends what auth returns in the Authorization header.
  api.setConfig({ auth: () => token });

  const key = { 'Idempotency-Key': 'typed-client-create-1' };
  const dune = { title: 'Dune', author: 'Frank Herbert', year: 1965 };
  const created = await createBook({ client: api, body: dune, headers: key });
  if (created.data === undefined) fail('POST /book', created.response);
  const book: Book = created.data.data;
  const id: number = book.id;

  // The same request with the same key: the first answer again, nothing written.
  const again = await createBook({ client: api, body: dune, headers: key });
  if (again.data === undefined) fail('POST /book again', again.response);
  // The same key for another request.
  const reused = await createBook({ client: api, body: { ...dune, year: 1966 }, headers: key });
  if (reused.error === undefined) throw new Error('POST /book with a reused key: no error');
  if (reused.error.status !== 422) fail('POST /book with a reused key', reused.response);
  const keyReused: IdempotencyKeyReusedResponse = reused.error;

  const listed = await listBooks({ client: api });
  if (listed.data === undefined) fail('GET /books', listed.response);

  const read = await getBook({ client: api, path: { id: book.id } });
  if (read.data === undefined) fail('GET /book/{id}', read.response);
  const etag = read.response.headers.get('ETag');
  if (etag === null) fail('GET /book/{id} without an ETag', read.response);

  const updated = await updateBook({ client: api, path: { id }, body: { year: 1966 }, headers: { 'If-Match': etag } });
  if (updated.data === undefined) fail('PUT /book/{id}', updated.response);
  // The ETag read before that update is stale now.
  const overwrite = await updateBook({ client: api, path: { id }, body: { year: 1967 }, headers: { 'If-Match': etag } });
  if (overwrite.error === undefined) throw new Error('PUT /book/{id} with a stale If-Match: no error');
  if (overwrite.error.status !== 412) fail('PUT /book/{id} with a stale If-Match', overwrite.response);
  const stale: PreconditionFailedResponse = overwrite.error;

  // A page at a time: the newest first, then the page the Link header points to.
  const emma = await createBook({ client: api, body: { title: 'Emma', author: 'Jane Austen', year: 1815 } });
  if (emma.data === undefined) fail('POST /book (Emma)', emma.response);
  const first = await listBooks({ client: api, query: { limit: 1, sort: '-year' } });
  if (first.data === undefined) fail('GET /books?limit=1&sort=-year', first.response);
  const link = first.response.headers.get('Link') ?? '';
  const cursor = new URL(link.slice(link.indexOf('<') + 1, link.indexOf('>')), baseUrl).searchParams.get('cursor');
  if (cursor === null) fail('GET /books?limit=1 without a next page', first.response);
  const second = await listBooks({ client: api, query: { limit: 1, sort: '-year', cursor } });
  if (second.data === undefined) fail('GET /books?cursor=…', second.response);
  const tooMany = await listBooks({ client: api, query: { limit: 0 } });
  if (tooMany.error === undefined) throw new Error('GET /books?limit=0: no error');
  if (tooMany.error.status !== 400 || tooMany.error.message !== 'Invalid limit: expected an integer from 1 to 1000') fail('GET /books?limit=0', tooMany.response);
  const badLimit: InvalidLimitResponse = tooMany.error;
  const batched = await applyBatch({
    client: api,
    body: { operations: [{ method: 'POST', path: '/book', body: { title: 'Persuasion', author: 'Jane Austen', year: 1817 } }, { method: 'DELETE', path: \`/book/\${emma.data.data.id}\` }] },
  });
  if (batched.data === undefined) fail('POST /batch', batched.response);
  const refusedBatch = await applyBatch({ client: api, body: { operations: [{ method: 'DELETE', path: '/book/999999999' }] } });
  if (refusedBatch.error === undefined) throw new Error('POST /batch of a missing book: no error');
  if (refusedBatch.error.status !== 422 || refusedBatch.error.message !== 'Batch not applied: an operation failed, nothing was written') fail('POST /batch of a missing book', refusedBatch.response);
  const notApplied: BatchNotAppliedResponse = refusedBatch.error;
  const persuasion = batched.data.data[0]?.data;
  if (persuasion === undefined || persuasion === null) fail('POST /batch: no book created', batched.response);
  const removed = await deleteBook({ client: api, path: { id: persuasion.id } });
  if (removed.data === undefined) fail('DELETE /book/{id} (Persuasion)', removed.response);

  const deleted = await deleteBook({ client: api, path: { id: book.id } });
  if (deleted.data === undefined) fail('DELETE /book/{id}', deleted.response);

  const gone = await getBook({ client: api, path: { id: book.id } });
  if (gone.error === undefined) throw new Error('GET /book/{id} after DELETE: no error');
  if (gone.error.status !== 404) fail('GET /book/{id} after DELETE', gone.response);
  const notFound: BookNotFoundResponse = gone.error;

  return {
    token: { status: login.data.status, message: login.data.message },
    created: { status: created.data.status, message: created.data.message, book },
    replayed: { status: again.data.status, id: again.data.data.id, header: again.response.headers.get('Idempotent-Replayed') },
    keyReused: { status: keyReused.status, message: keyReused.message },
    stale: { status: stale.status, message: stale.message },
    listed: { status: listed.data.status, message: listed.data.message, books: listed.data.data },
    read: { status: read.data.status, message: read.data.message, book: read.data.data },
    updated: { status: updated.data.status, message: updated.data.message, book: updated.data.data },
    pages: { first: first.data.data, total: first.response.headers.get('X-Total-Count'), second: second.data.data, last: second.response.headers.get('Link') === null },
    badLimit: { status: badLimit.status, message: badLimit.message },
    deleted: { status: deleted.data.status, message: deleted.data.message, data: deleted.data.data },
    gone: { httpStatus: gone.response.status, status: notFound.status, message: notFound.message },
    batch: { status: batched.data.status, message: batched.data.message, answers: batched.data.data.map((answer) => answer.status) },
    notApplied: { status: notApplied.status, operation: notApplied.data.operation, failed: notApplied.data.status, message: notApplied.data.message },
  };
}
`;

/** What the program prints (the ids the test compares). */
interface RunOutcome {
  created: { book: { id: number } };
  listed: { books: Array<{ id: number }> };
  read: { book: { id: number } };
  updated: { book: { id: number } };
}

/** Plain JavaScript that runs the compiled program and prints its outcome as JSON. */
const RUNNER = `
import { run } from './program.js';
const [baseUrl, username, password] = process.argv.slice(2);
process.stdout.write(JSON.stringify(await run(baseUrl, username, password)));
`;

/** Compiler options of the client program, as a consumer's strict tsconfig would have them. */
const TSCONFIG = {
  compilerOptions: {
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    noFallthroughCasesInSwitch: true,
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM', 'DOM.Iterable'],
    types: [],
    outDir: 'out',
    noEmitOnError: true,
  },
  files: ['program.ts'],
};

/** Type casts, `any` and non-null assertions in a source file, with their line. */
function escapeHatches(file: ts.SourceFile): string[] {
  const found: string[] = [];
  const report = (node: ts.Node, what: string) =>
    found.push(`${what} at line ${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${node.getText(file)}`);
  const visit = (node: ts.Node) => {
    if (ts.isAsExpression(node)) report(node, 'type cast (as)');
    if (ts.isTypeAssertionExpression(node)) report(node, 'type cast (<T>)');
    if (ts.isNonNullExpression(node)) report(node, 'non-null assertion');
    if (node.kind === ts.SyntaxKind.AnyKeyword) report(node, 'any');
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (/@ts-(ignore|expect-error|nocheck)/.test(file.text)) found.push('a @ts- directive');
  return found;
}

describe('a typed client generated from the served /openapi.json (@hey-api/openapi-ts)', () => {
  const service = useService('sqlite');
  let directory: string;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'typed-client-'));
  });
  afterAll(async () => {
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  it('generates the client, type-checks a cast-free program under strict, and runs it: login → keyed create, replay, 422 → list → get → If-Match update, 412 → two pages by cursor, a bad limit → delete → 404', async () => {
    // The document exactly as the service serves it.
    const response = await fetch(`${service.current.baseUrl}/openapi.json`);
    expect(response.status).toBe(200);
    const documentText = await response.text();
    await writeFile(join(directory, 'openapi.json'), documentText);

    // Generation reads the saved document only: any request it made would fail here.
    const requested: string[] = [];
    const network = vi.spyOn(globalThis, 'fetch').mockImplementation(async (input) => {
      requested.push(input instanceof Request ? input.url : String(input));
      throw new Error('no network while generating');
    });
    await createClient({
      input: join(directory, 'openapi.json'),
      output: { path: join(directory, 'generated'), module: { extension: '.js' } },
      plugins: ['@hey-api/client-fetch', '@hey-api/typescript', '@hey-api/sdk'],
      logs: { level: 'silent', file: false },
      interactive: false,
    }).finally(() => network.mockRestore());
    expect(requested).toEqual([]);
    await writeFile(join(directory, 'package.json'), JSON.stringify({ type: 'module', private: true }));
    await writeFile(join(directory, 'tsconfig.json'), JSON.stringify(TSCONFIG, null, 2));
    await writeFile(join(directory, 'program.ts'), CLIENT_PROGRAM);

    // The generated SDK: one function per operationId.
    const sdk = await readFile(join(directory, 'generated', 'sdk.gen.ts'), 'utf8');
    for (const name of ['createToken', 'createBook', 'listBooks', 'getBook', 'updateBook', 'deleteBook', 'getLiveness', 'getReadiness', 'getMetrics']) {
      expect(sdk, name).toMatch(new RegExp(`export const ${name} = `));
    }

    // The program itself takes no shortcut around the types.
    const parsed = ts.getParsedCommandLineOfConfigFile(join(directory, 'tsconfig.json'), undefined, {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
      },
    });
    if (!parsed) throw new Error('tsconfig.json could not be read');
    expect(parsed.options.strict).toBe(true);
    const program = ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
    const source = program.getSourceFile(join(directory, 'program.ts'));
    if (!source) throw new Error('program.ts is not in the program');
    expect(escapeHatches(source)).toEqual([]);

    // Zero diagnostics under strict, for the program and the generated client it imports.
    const diagnostics = ts.getPreEmitDiagnostics(program);
    const host: ts.FormatDiagnosticsHost = {
      getCanonicalFileName: (name) => name,
      getCurrentDirectory: () => directory,
      getNewLine: () => '\n',
    };
    expect(ts.formatDiagnostics(diagnostics, host)).toBe('');
    expect(program.getSourceFiles().some((file) => file.fileName.endsWith('/generated/sdk.gen.ts'))).toBe(true);
    const emitted = program.emit();
    expect(emitted.emitSkipped).toBe(false);
    await writeFile(join(directory, 'out', 'run.js'), RUNNER);

    // Run it under plain Node against the service.
    const { stdout } = await run(process.execPath, [join(directory, 'out', 'run.js'), service.current.baseUrl, TEST_USERNAME, TEST_PASSWORD], {
      timeout: 20_000,
    });
    const outcome: RunOutcome = JSON.parse(stdout);
    const book = { id: expect.any(Number), title: 'Dune', author: 'Frank Herbert', year: 1965 };
    expect(outcome).toEqual({
      token: { status: 200, message: Messages.tokenGenerated },
      created: { status: 201, message: Messages.bookCreated, book },
      replayed: { status: 201, id: outcome.created.book.id, header: 'true' },
      keyReused: { status: 422, message: Messages.idempotencyKeyReused },
      stale: { status: 412, message: Messages.preconditionFailed },
      listed: { status: 200, message: Messages.booksRetrieved, books: [book] },
      read: { status: 200, message: Messages.bookRetrieved, book },
      updated: { status: 200, message: Messages.bookUpdated, book: { ...book, year: 1966 } },
      pages: { first: [{ ...book, year: 1966 }], total: '2', second: [{ id: expect.any(Number), title: 'Emma', author: 'Jane Austen', year: 1815 }], last: true },
      badLimit: { status: 400, message: Messages.invalidLimit },
      deleted: { status: 200, message: Messages.bookDeleted, data: null },
      gone: { httpStatus: 404, status: 404, message: Messages.bookNotFound },
      batch: { status: 200, message: Messages.batchApplied, answers: [201, 200] },
      notApplied: { status: 422, operation: 0, failed: 404, message: Messages.bookNotFound },
    });
    // One book all along: the id the client got back is the one it read, updated and deleted.
    const { id } = outcome.created.book;
    expect(Number.isSafeInteger(id) && id >= 1).toBe(true);
    expect([outcome.listed.books[0]?.id, outcome.read.book.id, outcome.updated.book.id]).toEqual([id, id, id]);
  }, 60_000);
});
