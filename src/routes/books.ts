// The five book routes (GET /books's parameters: src/http/list-query.ts), and POST /batch, several
// of their writes in one transaction (its body read by src/http/batch.ts). Thin: authenticate
// (onRequest), parse the id, call the store, wrap the result in the envelope. Bodies are validated
// by the route schemas before the handler (a batch's by readBatch, with a message for each fault).
// A book's answers carry its ETag; PUT and DELETE take If-Match, GET If-None-Match
// (http/conditional-requests.ts); the writes take an Idempotency-Key (http/idempotency.ts).
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest, FastifySchema, HookHandlerDoneFunction, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { bookJson, type BookFields, type VersionedBook } from '../books/book.js';
import { parseBookId } from '../books/book-id.js';
import { sortValueOf } from '../books/book-query.js';
import { etagOf, ifMatchVersions, isWellFormedCondition, noneMatchFails } from '../http/conditional-requests.js';
import { Messages, envelope, envelopeJson, errorEnvelope, type Message } from '../http/envelope.js';
import { matchingPieces } from '../http/book-list.js';
import { BATCH_BODY_LIMIT_BYTES, readBatch } from '../http/batch.js';
import { idempotencyKeyOf, keyedRequest, sendAnswer } from '../http/idempotency.js';
import { listCursors } from '../http/list-cursor.js';
import { nextPageUrl, readListParameters, type ListRequest } from '../http/list-query.js';
import { BatchBody, BatchResponses } from '../schemas/batch.js';
import { BookIdParams, BookResponses, CreateBookBody, UpdateBookBody, type UpdateBookBody as UpdateBody } from '../schemas/book.js';
import { refTo } from '../schemas/shared.js';
import { KeyTakenOverError, type BatchOutcome, type KeyedWrite, type StoredAnswer } from '../store/book-store.js';

export { LIST_PAGE_SIZE } from '../http/book-list.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The book a PUT applies to, loaded before its body is read (404 before 400). */
    existingBook: VersionedBook | undefined;
    /** The request's Idempotency-Key, checked before the body is read. */
    idempotencyKey: string | undefined;
  }
}

export interface BookRoutesOptions {
  /** SECRET_TOKEN: list cursors are signed with a key derived from it (src/http/list-cursor.ts). */
  secret: string;
}

const bookRoutes: FastifyPluginAsyncTypebox<BookRoutesOptions> = async (app, { secret }) => {
  const { store, requireToken, bookLists } = app;
  const cursors = listCursors(secret);
  app.decorateRequest('existingBook', undefined);
  app.decorateRequest('idempotencyKey', undefined);

  /**
   * A book operation's route options: the token is checked first (onRequest, before the body
   * is read, the id parsed or the store asked), then `next` if given; the OpenAPI document
   * shows the operation as protected by the token.
   */
  function bookOperation<Schema extends FastifySchema>(operationId: string, summary: string, schema: Schema, ...next: onRequestHookHandler[]) {
    return {
      onRequest: next.length > 0 ? [requireToken, ...next] : requireToken,
      schema: { tags: ['books'], security: [{ token: [] }], operationId, summary, ...schema },
    };
  }

  /** The book the `:id` of the path names; undefined when it names none (not an id, or no such book). */
  function findBook(rawId: string | undefined): Promise<VersionedBook | undefined> | undefined {
    const id = parseBookId(rawId);
    return id === undefined ? undefined : store.get(id);
  }

  const bookNotFound = (reply: FastifyReply) => reply.code(404).send(errorEnvelope(404, Messages.bookNotFound));
  // Not Modified: the client's copy is current. No payload at all (not even null, which the
  // serializer would write as 4 bytes that HTTP forbids after a 304, leaving a client waiting).
  const notModified = (reply: FastifyReply) => reply.code(304).send();
  const preconditionFailed = (reply: FastifyReply) => reply.code(412).send(errorEnvelope(412, Messages.preconditionFailed));

  /**
   * onRequest, after the token: a malformed Idempotency-Key is a 400 before the body is read.
   * A callback hook, not an async one: without a key it costs a header lookup, no promise.
   */
  function checkIdempotencyKey(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const key = idempotencyKeyOf(request);
    if (key === 'invalid') {
      reply.code(400).send(errorEnvelope(400, Messages.invalidIdempotencyKey));
      return;
    }
    request.idempotencyKey = key;
    done();
  }

  /**
   * A write with an Idempotency-Key: the key claimed (or the stored answer sent again, or 409,
   * or 422), then `write`, which stores the answer `answerOf` makes in its own transaction.
   * An outcome without an answer to store (404, 412) is sent by `sendOther`, the key let go.
   */
  async function writeOnce<Outcome>(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    answerOf: (outcome: Outcome) => StoredAnswer | undefined,
    write: (idempotency: KeyedWrite<Outcome>) => Promise<Outcome>,
    sendOther: (outcome: Outcome) => FastifyReply,
  ): Promise<FastifyReply> {
    const keyed = keyedRequest(request, key);
    const claim = await store.claimKey(keyed);
    if (claim.kind === 'replay') return sendAnswer(reply, claim.answer, true);
    if (claim.kind === 'in-progress') return keyInProgress(reply);
    if (claim.kind === 'other-request') return reply.code(422).send(errorEnvelope(422, Messages.idempotencyKeyReused));
    let outcome: Outcome;
    try {
      outcome = await write({ request: keyed, answer: answerOf });
    } catch (error) {
      // Rolled back: nothing was written, and another attempt holds the key now.
      if (error instanceof KeyTakenOverError) return keyInProgress(reply);
      // Rolled back too (or, a connection lost during COMMIT, stored with its answer: then this
      // finds the key answered and leaves it). Let go of it so a retry can run at once.
      await store.releaseKey(keyed).catch((releaseError: unknown) => request.log.warn({ err: releaseError }, 'could not let go of an Idempotency-Key'));
      throw error;
    }
    const answer = answerOf(outcome);
    return answer ? sendAnswer(reply, answer, false) : sendOther(outcome);
  }

  const keyInProgress = (reply: FastifyReply) => reply.code(409).send(errorEnvelope(409, Messages.idempotencyKeyInProgress));

  app.post(
    '/book',
    {
      ...bookOperation('createBook', 'Create a book', { body: refTo(CreateBookBody), response: BookResponses.created }, checkIdempotencyKey),
      config: { invalidBodyMessage: Messages.invalidBook },
    },
    async (request, reply) => {
      const { title, author, year } = request.body;
      const fields = { title, author, year };
      const key = request.idempotencyKey;
      if (key !== undefined) {
        return writeOnce(request, reply, key, createdAnswer, (idempotency) => store.create(fields, idempotency), () => reply);
      }
      const book = await store.create(fields);
      return reply.code(201).header('etag', etagOf(book)).send(envelope(201, Messages.bookCreated, book));
    },
  );

  app.get(
    '/books',
    bookOperation('listBooks', 'List the books: every one by id, or a page, sorted and searched', { response: BookResponses.list }),
    async (request, reply) => {
      const parameters = readListParameters(request.query as Record<string, unknown>, cursors);
      if (parameters.kind === 'invalid') return reply.code(400).send(errorEnvelope(400, parameters.message));
      // Read before the books: the answer holds every change up to it, so following the feed
      // from it (GET /books/changes) misses none (docs/api.md "List, then follow").
      reply.code(200).header('changes-cursor', await app.changeFeed.cursor());
      if (parameters.kind === 'query') return sendQueriedList(reply, parameters.request);
      // The store writes each book's JSON (BookStore.listPageJson); the envelope around it is
      // the one the response schema describes (src/http/book-list.ts).
      const answer = await bookLists.answer();
      if (answer.kind === 'whole') return sendPreSerializedJson(reply, answer.body);
      // A large collection is streamed page by page, so memory stays bounded whatever its size.
      return sendPreSerializedJson(reply, Readable.from(answer.chunks()));
    },
  );

  /**
   * The books a list request's parameters ask for: one page (`limit`), with the link to the
   * next and, on the first page, how many books match; or, without `limit`, all of them, streamed.
   */
  async function sendQueriedList(reply: FastifyReply, list: ListRequest): Promise<FastifyReply> {
    const { sort, terms, after, limit } = list;
    if (limit === undefined) return sendPreSerializedJson(reply, Readable.from(matchingPieces(store, { sort, terms, after })));
    // One book more than the page: whether a next page exists, so the last page has no link.
    const { books, total } = await store.findBooks({ sort, terms, after, limit: limit + 1, counted: after === undefined });
    if (books.length > limit) {
      books.length = limit;
      const last = books[limit - 1]!;
      const cursor = cursors.issue(sort, terms, { value: sortValueOf(last, sort.field), id: last.id });
      reply.header('link', `<${nextPageUrl(list, limit, cursor)}>; rel="next"`);
    }
    if (total) reply.header(total.exact ? 'x-total-count' : 'x-total-count-estimate', String(total.count));
    return reply.send(envelope(200, Messages.booksRetrieved, books));
  }

  /**
   * onRequest, after the token (and the Idempotency-Key): a malformed If-Match or If-None-Match
   * is a 400, not a 412 or a 200, since nothing could be compared; nothing is read or written.
   */
  function checkCondition(header: 'if-match' | 'if-none-match', message: Message): onRequestHookHandler {
    return function checkConditionHeader(request, reply, done) {
      const value = request.headers[header];
      if (value !== undefined && !isWellFormedCondition(value)) {
        reply.code(400).send(errorEnvelope(400, message));
        return;
      }
      done();
    };
  }
  const checkIfMatch = checkCondition('if-match', Messages.invalidIfMatch);
  const checkIfNoneMatch = checkCondition('if-none-match', Messages.invalidIfNoneMatch);

  app.get(
    '/book/:id',
    bookOperation('getBook', 'Read one book', { params: BookIdParams, response: BookResponses.read }, checkIfNoneMatch),
    async (request, reply) => {
      const book = await findBook(request.params.id);
      if (!book) return bookNotFound(reply);
      const etag = etagOf(book);
      reply.header('etag', etag);
      // Not Modified: the client's copy is current; no body (HTTP forbids one).
      if (noneMatchFails(request.headers['if-none-match'], etag)) return notModified(reply);
      return reply.code(200).send(envelope(200, Messages.bookRetrieved, book));
    },
  );

  // The book is looked up first (404), then the body is applied (400). The lookup
  // is an onRequest hook so that it runs before the body is even parsed.
  // With an Idempotency-Key, the book is looked up in the write's transaction instead (a
  // repeat gets the stored answer even if the book is gone since), so the body comes first.
  async function loadExistingBook(request: FastifyRequest, reply: FastifyReply) {
    if (request.idempotencyKey !== undefined) return;
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
        checkIdempotencyKey,
        checkIfMatch,
        loadExistingBook,
      ),
      config: { invalidBodyMessage: Messages.invalidBook },
    },
    async (request, reply) => {
      const changes = pickChanges(request.body);
      const key = request.idempotencyKey;
      if (key !== undefined) {
        const id = parseBookId(request.params.id);
        if (id === undefined) return bookNotFound(reply);
        const ifVersion = ifMatchVersions(request.headers['if-match'], id);
        return writeOnce(
          request,
          reply,
          key,
          updatedAnswer,
          (idempotency) => store.update(id, changes, { ifVersion, idempotency }),
          (outcome) => (outcome === 'changed' ? preconditionFailed(reply) : bookNotFound(reply)),
        );
      }
      const existing = request.existingBook as VersionedBook;
      const ifVersion = ifMatchVersions(request.headers['if-match'], existing.id);
      const outcome =
        Object.keys(changes).length === 0 && ifVersion === undefined ? existing : await store.update(existing.id, changes, { ifVersion });
      if (outcome === 'changed') return preconditionFailed(reply);
      // Deleted between the lookup and the update: it is gone, so 404.
      if (outcome === 'missing') return bookNotFound(reply);
      return reply.code(200).header('etag', etagOf(outcome)).send(envelope(200, Messages.bookUpdated, outcome));
    },
  );

  app.delete(
    '/book/:id',
    bookOperation('deleteBook', 'Delete a book', { params: BookIdParams, response: BookResponses.deleted }, checkIdempotencyKey, checkIfMatch),
    async (request, reply) => {
      const id = parseBookId(request.params.id);
      if (id === undefined) return bookNotFound(reply);
      const ifVersion = ifMatchVersions(request.headers['if-match'], id);
      const sendOutcome = (outcome: 'missing' | 'changed') => (outcome === 'changed' ? preconditionFailed(reply) : bookNotFound(reply));
      const key = request.idempotencyKey;
      if (key !== undefined) {
        return writeOnce(request, reply, key, deletedAnswer, (idempotency) => store.delete(id, { ifVersion, idempotency }), (outcome) =>
          sendOutcome(outcome as 'missing' | 'changed'),
        );
      }
      const outcome = await store.delete(id, { ifVersion });
      if (outcome !== 'deleted') return sendOutcome(outcome);
      return reply.code(200).send(envelope(200, Messages.bookDeleted, null));
    },
  );
  app.post(
    '/batch',
    {
      ...bookOperation('applyBatch', 'Create, update and delete books in one transaction: every operation, or none', { body: refTo(BatchBody), response: BatchResponses }, checkIdempotencyKey),
      bodyLimit: BATCH_BODY_LIMIT_BYTES,
      // The schema documents a batch; readBatch reads it, with a message for each way it can be wrong.
      attachValidation: true,
      config: { invalidBodyMessage: Messages.invalidBatch },
    },
    async (request, reply) => {
      const read = readBatch(request.body);
      if (read.kind === 'invalid') return reply.code(400).send(errorEnvelope(400, read.message));
      if (read.kind === 'refused') return batchNotApplied(reply, read.operation, read.status, read.message);
      const sendFailed = (outcome: BatchOutcome) => {
        const { operation, outcome: failure } = outcome as Extract<BatchOutcome, { kind: 'failed' }>;
        return failure === 'changed'
          ? batchNotApplied(reply, operation, 412, Messages.preconditionFailed)
          : batchNotApplied(reply, operation, 404, Messages.bookNotFound);
      };
      const key = request.idempotencyKey;
      if (key !== undefined) {
        return writeOnce(request, reply, key, batchAnswer, (idempotency) => store.applyBatch(read.operations, idempotency), sendFailed);
      }
      const outcome = await store.applyBatch(read.operations);
      const answer = batchAnswer(outcome);
      return answer ? sendAnswer(reply, answer, false) : sendFailed(outcome);
    },
  );
};

/** A batch with an operation that would have been refused on its own: 422, which one and its answer; nothing written. */
function batchNotApplied(reply: FastifyReply, operation: number, status: number, message: Message): FastifyReply {
  return reply.code(422).send({ status: 422, message: Messages.batchNotApplied, data: { operation, status, message } });
}

/** An applied batch's answer (stored with its Idempotency-Key too): each operation's envelope, as its single request's. */
function batchAnswer(outcome: BatchOutcome): StoredAnswer | undefined {
  if (outcome.kind === 'failed') return undefined;
  const answers = outcome.results.map((result) => {
    if (result.kind === 'deleted') return envelopeJson(200, Messages.bookDeleted, 'null');
    if (result.kind === 'created') return envelopeJson(201, Messages.bookCreated, bookJson(result.book));
    return envelopeJson(200, Messages.bookUpdated, bookJson(result.book));
  });
  return { status: 200, etag: undefined, body: envelopeJson(200, Messages.batchApplied, `[${answers.join(',')}]`) };
}

export default fp(bookRoutes, { name: 'book-routes', dependencies: ['store', 'auth', 'change-feed'] });

// The answers stored with an Idempotency-Key: the same bytes as the answers without one.
function createdAnswer(book: VersionedBook): StoredAnswer {
  return { status: 201, etag: etagOf(book), body: envelopeJson(201, Messages.bookCreated, bookJson(book)) };
}

function updatedAnswer(outcome: VersionedBook | 'missing' | 'changed'): StoredAnswer | undefined {
  if (typeof outcome === 'string') return undefined;
  return { status: 200, etag: etagOf(outcome), body: envelopeJson(200, Messages.bookUpdated, bookJson(outcome)) };
}

function deletedAnswer(outcome: 'deleted' | 'missing' | 'changed'): StoredAnswer | undefined {
  return outcome === 'deleted' ? { status: 200, etag: undefined, body: envelopeJson(200, Messages.bookDeleted, 'null') } : undefined;
}

/** Only the three book fields; `id` and unknown fields in the body are ignored. */
function pickChanges(body: UpdateBody): Partial<BookFields> {
  const changes: Partial<BookFields> = {};
  if (body.title !== undefined) changes.title = body.title;
  if (body.author !== undefined) changes.author = body.author;
  if (body.year !== undefined) changes.year = body.year;
  return changes;
}

/**
 * Sends JSON that is already written, as it is: Fastify sends a Buffer or a stream with a
 * JSON Content-Type without running the route's response serializer. So the response schema
 * only documents this body: src/http/book-list.ts says what guarantees its bytes.
 */
function sendPreSerializedJson(reply: FastifyReply, json: Buffer | Readable): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
