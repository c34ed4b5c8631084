// The five book routes. Thin: authenticate (onRequest), parse the id, call the store, wrap
// the result in the envelope. Bodies are validated by the route schemas before the handler.
import { Readable } from 'node:stream';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import { Messages, envelope, errorEnvelope } from '../http/envelope.js';
import type { App } from '../http/types.js';
import type { BookFields, StoredBook } from './book.js';
import type { BookPage, BookStore } from '../store/book-store.js';
import { parseBookId } from './book-id.js';
import { BookIdParams, BookResponses, CreateBookBody, UpdateBookBody, refTo, type UpdateBookBody as UpdateBody } from './schemas.js';

export interface BookRouteOptions {
  store: BookStore;
  requireToken: onRequestHookHandler;
}

/** Protected routes: the token in `Authorization` (raw, or with a `Bearer ` prefix). */
const TOKEN_SECURITY = [{ token: [] }];

/** Rows per store query when listing; also the size above which the list is streamed. */
export const LIST_PAGE_SIZE = 1000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The book a PUT applies to, loaded before its body is read (404 before 400). */
    existingBook: StoredBook | undefined;
  }
}

export function registerBookRoutes(app: App, { store, requireToken }: BookRouteOptions) {
  app.decorateRequest('existingBook', undefined);

  const bookNotFound = (reply: FastifyReply) => reply.code(404).send(errorEnvelope(404, Messages.bookNotFound));

  app.post(
    '/book',
    {
      onRequest: requireToken,
      config: { invalidBodyMessage: Messages.invalidBook },
      schema: {
        tags: ['books'],
        security: TOKEN_SECURITY,
        operationId: 'createBook',
        summary: 'Create a book',
        body: refTo(CreateBookBody),
        response: BookResponses.created,
      },
    },
    async (request, reply) => {
      const { title, author, year } = request.body;
      const book = await store.create({ title, author, year });
      return reply.code(201).send(envelope(201, Messages.bookCreated, book));
    },
  );

  app.get(
    '/books',
    {
      onRequest: requireToken,
      schema: {
        tags: ['books'],
        security: TOKEN_SECURITY,
        operationId: 'listBooks',
        summary: 'List every book, ordered by id',
        response: BookResponses.list,
      },
    },
    async (_request, reply) => {
      // The store writes each book's JSON (see BookStore.listPageJson); the envelope around it
      // is the one the response schema describes.
      const firstPage = await store.listPageJson(0n, LIST_PAGE_SIZE);
      reply.code(200).type('application/json; charset=utf-8');
      if (firstPage.count < LIST_PAGE_SIZE) {
        return reply.send((LIST_PREFIX + firstPage.json + LIST_SUFFIX) as never);
      }
      // A large collection is streamed page by page, so memory stays bounded whatever its size.
      return reply.send(Readable.from(streamBookList(store, firstPage)) as never);
    },
  );

  app.get(
    '/book/:id',
    {
      onRequest: requireToken,
      schema: {
        tags: ['books'],
        security: TOKEN_SECURITY,
        operationId: 'getBook',
        summary: 'Read one book',
        params: BookIdParams,
        response: BookResponses.read,
      },
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const book = id === undefined ? undefined : await store.get(id);
      if (!book) return bookNotFound(reply);
      return reply.code(200).send(envelope(200, Messages.bookRetrieved, book));
    },
  );

  // The book is looked up first (404), then the body is applied (400). The lookup
  // is an onRequest hook so that it runs before the body is even parsed.
  async function loadExistingBook(request: FastifyRequest, reply: FastifyReply) {
    const id = parseBookId((request.params as { id?: string }).id);
    const book = id === undefined ? undefined : await store.get(id);
    if (!book) return bookNotFound(reply);
    request.existingBook = book;
  }

  app.put(
    '/book/:id',
    {
      onRequest: [requireToken, loadExistingBook],
      config: { invalidBodyMessage: Messages.invalidBook },
      schema: {
        tags: ['books'],
        security: TOKEN_SECURITY,
        operationId: 'updateBook',
        summary: 'Update some or all fields of a book',
        params: BookIdParams,
        body: refTo(UpdateBookBody),
        response: BookResponses.updated,
      },
    },
    async (request, reply) => {
      const existing = request.existingBook as StoredBook;
      const changes = pickChanges(request.body);
      const book = Object.keys(changes).length === 0 ? existing : await store.update(existing.id, changes);
      // Deleted between the lookup and the update: it is gone, so 404.
      if (!book) return bookNotFound(reply);
      return reply.code(200).send(envelope(200, Messages.bookUpdated, book));
    },
  );

  app.delete(
    '/book/:id',
    {
      onRequest: requireToken,
      schema: {
        tags: ['books'],
        security: TOKEN_SECURITY,
        operationId: 'deleteBook',
        summary: 'Delete a book',
        params: BookIdParams,
        response: BookResponses.deleted,
      },
    },
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const deleted = id !== undefined && (await store.delete(id));
      if (!deleted) return bookNotFound(reply);
      return reply.code(200).send(envelope(200, Messages.bookDeleted, null));
    },
  );
}

/** Only the three book fields; `id` and unknown fields in the body are ignored. */
function pickChanges(body: UpdateBody): Partial<BookFields> {
  const changes: Partial<BookFields> = {};
  if (body.title !== undefined) changes.title = body.title;
  if (body.author !== undefined) changes.author = body.author;
  if (body.year !== undefined) changes.year = body.year;
  return changes;
}

const LIST_PREFIX = `{"status":200,"message":${JSON.stringify(Messages.booksRetrieved)},"data":[`;
const LIST_SUFFIX = ']}';

/**
 * The list envelope as a stream of JSON text, one store page at a time. A store failure
 * mid-stream aborts the response (the status line has gone out already).
 */
async function* streamBookList(store: BookStore, firstPage: BookPage): AsyncGenerator<string> {
  yield LIST_PREFIX;
  let page = firstPage;
  let separator = '';
  for (;;) {
    if (page.count > 0) {
      yield separator + page.json;
      separator = ',';
    }
    if (page.count < LIST_PAGE_SIZE || page.lastId === undefined) break;
    page = await store.listPageJson(page.lastId, LIST_PAGE_SIZE);
  }
  yield LIST_SUFFIX;
}
