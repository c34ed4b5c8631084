// The five book routes. Thin: authenticate (onRequest), parse the id, call the store, wrap
// the result in the envelope. Bodies are validated by the route schemas before the handler.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { BookFields, StoredBook } from '../books/book.js';
import { parseBookId } from '../books/book-id.js';
import { Messages, envelope, errorEnvelope } from '../http/envelope.js';
import { BookIdParams, BookResponses, CreateBookBody, UpdateBookBody, type UpdateBookBody as UpdateBody } from '../schemas/book.js';
import { refTo } from '../schemas/common.js';
import type { BookPage, BookStore } from '../store/book-store.js';

/** Rows per store query when listing; also the size above which the list is streamed. */
export const LIST_PAGE_SIZE = 1000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The book a PUT applies to, loaded before its body is read (404 before 400). */
    existingBook: StoredBook | undefined;
  }
}

const bookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { store, requireToken } = app;
  app.decorateRequest('existingBook', undefined);

  /**
   * A book operation's route options: the token is checked first (onRequest, before the body
   * is read, the id parsed or the store asked), then `next` if given; the OpenAPI document
   * shows the operation as protected by the token.
   */
  function bookOperation<Schema extends FastifySchema>(operationId: string, summary: string, schema: Schema, next?: onRequestHookHandler) {
    return {
      onRequest: next ? [requireToken, next] : requireToken,
      schema: { tags: ['books'], security: [{ token: [] }], operationId, summary, ...schema },
    };
  }

  /** The book the `:id` of the path names; undefined when it names none (not an id, or no such book). */
  function findBook(rawId: string | undefined): Promise<StoredBook | undefined> | undefined {
    const id = parseBookId(rawId);
    return id === undefined ? undefined : store.get(id);
  }

  const bookNotFound = (reply: FastifyReply) => reply.code(404).send(errorEnvelope(404, Messages.bookNotFound));

  app.post(
    '/book',
    {
      ...bookOperation('createBook', 'Create a book', { body: refTo(CreateBookBody), response: BookResponses.created }),
      config: { invalidBodyMessage: Messages.invalidBook },
    },
    async (request, reply) => {
      const { title, author, year } = request.body;
      const book = await store.create({ title, author, year });
      return reply.code(201).send(envelope(201, Messages.bookCreated, book));
    },
  );

  app.get(
    '/books',
    bookOperation('listBooks', 'List every book, ordered by id', { response: BookResponses.list }),
    async (_request, reply) => {
      // The store writes each book's JSON (BookStore.listPageJson); the envelope around it is
      // the one the response schema describes.
      const firstPage = await store.listPageJson(0n, LIST_PAGE_SIZE);
      reply.code(200);
      if (firstPage.count < LIST_PAGE_SIZE) return sendPreSerializedJson(reply, LIST_PREFIX + firstPage.json + LIST_SUFFIX);
      // A large collection is streamed page by page, so memory stays bounded whatever its size.
      return sendPreSerializedJson(reply, Readable.from(streamBookList(store, firstPage)));
    },
  );

  app.get(
    '/book/:id',
    bookOperation('getBook', 'Read one book', { params: BookIdParams, response: BookResponses.read }),
    async (request, reply) => {
      const book = await findBook(request.params.id);
      if (!book) return bookNotFound(reply);
      return reply.code(200).send(envelope(200, Messages.bookRetrieved, book));
    },
  );

  // The book is looked up first (404), then the body is applied (400). The lookup
  // is an onRequest hook so that it runs before the body is even parsed.
  async function loadExistingBook(request: FastifyRequest, reply: FastifyReply) {
    const book = await findBook((request.params as { id?: string }).id);
    if (!book) return bookNotFound(reply);
    request.existingBook = book;
  }

  app.put(
    '/book/:id',
    {
      ...bookOperation(
        'updateBook',
        'Update some or all fields of a book',
        { params: BookIdParams, body: refTo(UpdateBookBody), response: BookResponses.updated },
        loadExistingBook,
      ),
      config: { invalidBodyMessage: Messages.invalidBook },
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
    bookOperation('deleteBook', 'Delete a book', { params: BookIdParams, response: BookResponses.deleted }),
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      const deleted = id !== undefined && (await store.delete(id));
      if (!deleted) return bookNotFound(reply);
      return reply.code(200).send(envelope(200, Messages.bookDeleted, null));
    },
  );
};

export default fp(bookRoutes, { name: 'book-routes', dependencies: ['store', 'auth'] });

/** Only the three book fields; `id` and unknown fields in the body are ignored. */
function pickChanges(body: UpdateBody): Partial<BookFields> {
  const changes: Partial<BookFields> = {};
  if (body.title !== undefined) changes.title = body.title;
  if (body.author !== undefined) changes.author = body.author;
  if (body.year !== undefined) changes.year = body.year;
  return changes;
}

/**
 * Sends JSON text that is already written, as it is: Fastify sends a string or a stream with a
 * JSON Content-Type without running the route's response serializer. So the response schema
 * only documents this body, and nothing here checks the text against it: it must be what the
 * serializer would write, the envelope below around each book exactly as bookJson()
 * (src/books/book.ts) writes it. That is BookStore.listPageJson's promise, which
 * test/stores/book-definition.test.ts checks for every store.
 */
function sendPreSerializedJson(reply: FastifyReply, json: string | Readable): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
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
