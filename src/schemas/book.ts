// The book's schemas: the stored book, the create and update bodies, the `:id` parameter and
// every answer of the five book routes. Fields and limits come from src/books/book.ts.
import { Type, type Static, type TSchema } from 'typebox';
import { SEARCH_MAX_LENGTH, SEARCH_MAX_TERMS } from '../books/book-query.js';
import { BOOK_TEXT_MAX_LENGTH, BOOK_YEAR_MAX, BOOK_YEAR_MIN, type BOOK_COLUMNS, type BOOK_FIELDS } from '../books/book.js';
import { Messages } from '../http/envelope.js';
import {
  BodyTooLargeResponse,
  BookNotFoundResponse,
  IdempotencyKeyInProgressResponse,
  IdempotencyKeyReusedResponse,
  InvalidIdempotencyKeyResponse,
  InvalidIfMatchResponse,
  InvalidIfNoneMatchResponse,
  InvalidInputResponse,
  PreconditionFailedResponse,
  envelopeSchema,
  errorChoice,
  oneOf,
  refTo,
  tokenAndStoreFailures,
} from './shared.js';

/**
 * 1 to 500 characters, not only white space. NUL and lone UTF-16 surrogates are refused
 * too: PostgreSQL cannot store NUL in text and no store can round-trip a lone surrogate,
 * so accepting them would mean a 5xx or a silently altered record.
 */
const TEXT_PATTERN = '^(?=[\\s\\S]*\\S)[^\\u0000\\uD800-\\uDFFF]*$';

const BookText = (description: string) =>
  Type.String({ minLength: 1, maxLength: BOOK_TEXT_MAX_LENGTH, pattern: TEXT_PATTERN, description });

const BookYear = Type.Integer({ minimum: BOOK_YEAR_MIN, maximum: BOOK_YEAR_MAX, description: 'Year of the book' });

const ID_RANGE = 'an integer from 1 to 9223372036854775807 (64 bits)';

/** 64-bit ids travel as `bigint` inside the service and as exact JSON integers on the wire. */
const BookId = Type.Unsafe<bigint>({
  type: 'integer',
  format: 'int64',
  minimum: 1,
  description:
    `Book id: ${ID_RANGE}, written as an exact JSON integer. ` +
    'Clients that read JSON numbers as doubles see ids above 2^53 rounded.',
});

/**
 * The `:id` path parameter as it is validated: any string. parseBookId then answers
 * anything that is not a valid id (`abc`, `0`, `-1`, `1.5`, 30 digits) with 404
 * "Book not found", after authentication, exactly like a missing book.
 */
export const BookIdParams = Type.Object({ id: Type.String() });

/**
 * The `:id` path parameter as the OpenAPI document shows it: what a valid id is.
 * Documentation only (see src/plugins/external/api-reference.ts): requests are validated with BookIdParams.
 */
export const DocumentedBookIdParams = Type.Object({
  id: Type.Integer({
    format: 'int64',
    minimum: 1,
    description: `Book id: ${ID_RANGE}. Any other value is answered 404 "${Messages.bookNotFound}".`,
  }),
});

/** A stored book: one property per column, in BOOK_COLUMNS order (the order every JSON writer uses). */
export const Book = Type.Object(
  {
    id: BookId,
    title: Type.String({ description: 'Title of the book' }),
    author: Type.String({ description: 'Author of the book' }),
    year: Type.Integer({ description: 'Year of the book' }),
  } satisfies Record<(typeof BOOK_COLUMNS)[number], TSchema>,
  { $id: 'Book', additionalProperties: false, description: 'A stored book' },
);

/** `id` and unknown fields are accepted and ignored. */
export const CreateBookBody = Type.Object(
  {
    title: BookText('Title of the book'),
    author: BookText('Author of the book'),
    year: BookYear,
  } satisfies Record<(typeof BOOK_FIELDS)[number], TSchema>,
  { $id: 'CreateBookBody', description: 'A new book: all three fields. `id` and unknown fields are ignored.' },
);

/** Any subset of the create fields; absent fields keep their stored values. */
export const UpdateBookBody = Type.Object(
  {
    title: Type.Optional(BookText('Title of the book')),
    author: Type.Optional(BookText('Author of the book')),
    year: Type.Optional(BookYear),
  } satisfies Record<(typeof BOOK_FIELDS)[number], TSchema>,
  {
    $id: 'UpdateBookBody',
    description: 'Any subset of the book fields (`{}` changes nothing); absent fields keep their values.',
  },
);
export type UpdateBookBody = Static<typeof UpdateBookBody>;

export const BookCreatedResponse = envelopeSchema(
  'BookCreatedResponse',
  201,
  Messages.bookCreated,
  refTo(Book),
  'The stored book, with its new id',
);
export const BookListResponse = envelopeSchema(
  'BookListResponse',
  200,
  Messages.booksRetrieved,
  Type.Array(refTo(Book)),
  'Every book, ordered by id ascending (`[]` when there is none); with `limit`, one page of the books asked for; with `sort` or `q`, in that order, searched',
);
export const BookRetrievedResponse = envelopeSchema('BookRetrievedResponse', 200, Messages.bookRetrieved, refTo(Book), 'The book');
export const BookUpdatedResponse = envelopeSchema('BookUpdatedResponse', 200, Messages.bookUpdated, refTo(Book), 'The updated book');
export const BookDeletedResponse = envelopeSchema(
  'BookDeletedResponse',
  200,
  Messages.bookDeleted,
  Type.Null(),
  'The book is gone; a later read answers 404',
);
/** A bad value of GET /books's parameters (docs/api.md "GET /books"), each its own 400, and all of them as one answer. */
export const { InvalidLimitResponse, InvalidSortResponse, InvalidSearchResponse, CursorNotIssuedResponse, CursorForOtherListResponse, BadListRequestResponse } = errorChoice(
  'BadListRequestResponse',
  'A parameter of the list has a bad value (or is given twice)',
  {
    InvalidLimitResponse: [400, Messages.invalidLimit, '`limit` is not an integer from 1 to 1000'],
    InvalidSortResponse: [400, Messages.invalidSort, '`sort` is not one of id, title, author, year, -id, -title, -author, -year'],
    InvalidSearchResponse: [400, Messages.invalidSearch, `\`q\` is over ${SEARCH_MAX_LENGTH} characters or has more than ${SEARCH_MAX_TERMS} terms`],
    CursorNotIssuedResponse: [400, Messages.cursorNotIssued, '`cursor` is not one this service issued (changed, or signed with another SECRET_TOKEN)'],
    CursorForOtherListResponse: [400, Messages.cursorForOtherList, '`cursor` came from a list with another `sort` or `q`'],
  },
);

/** A book written with a bad body, or a bad Idempotency-Key. */
export const BadBookWriteResponse = oneOf(
  'BadBookWriteResponse',
  'The body cannot be read as a book, or the Idempotency-Key header is malformed; nothing is stored or changed',
  [InvalidInputResponse, InvalidIdempotencyKeyResponse],
);

/** A PUT with a bad body, a bad Idempotency-Key or a malformed If-Match. */
export const BadBookUpdateResponse = oneOf(
  'BadBookUpdateResponse',
  'The body cannot be read as a book, or the Idempotency-Key or If-Match header is malformed; nothing is changed',
  [InvalidInputResponse, InvalidIdempotencyKeyResponse, InvalidIfMatchResponse],
);

/** A DELETE with a bad Idempotency-Key or a malformed If-Match. */
export const BadBookDeleteResponse = oneOf(
  'BadBookDeleteResponse',
  'The Idempotency-Key or If-Match header is malformed; nothing is deleted',
  [InvalidIdempotencyKeyResponse, InvalidIfMatchResponse],
);

const bookNotFound = refTo(BookNotFoundResponse);
const badWrite = refTo(BadBookWriteResponse);
const bodyTooLarge = refTo(BodyTooLargeResponse);
/** Answers of a write that brings an Idempotency-Key (docs/api.md "Idempotency-Key"). */
const keyedFailures = { 409: refTo(IdempotencyKeyInProgressResponse), 422: refTo(IdempotencyKeyReusedResponse) };
const preconditionFailed = refTo(PreconditionFailedResponse);
const notModified = Type.Null({ description: 'Not Modified: If-None-Match names the book\'s current ETag (sent again); no body' });

/** What a PUT or DELETE of one book may also answer: the token, no such book, the key's answers, If-Match, a body too large, the store. */
const writeOfOneBookFailures = {
  404: bookNotFound,
  ...keyedFailures,
  412: preconditionFailed,
  413: bodyTooLarge,
  ...tokenAndStoreFailures,
};

export const BookResponses = {
  created: { 201: refTo(BookCreatedResponse), 400: badWrite, ...keyedFailures, 413: bodyTooLarge, ...tokenAndStoreFailures },
  list: { 200: refTo(BookListResponse), 400: refTo(BadListRequestResponse), ...tokenAndStoreFailures },
  read: { 200: refTo(BookRetrievedResponse), 304: notModified, 400: refTo(InvalidIfNoneMatchResponse), 404: bookNotFound, ...tokenAndStoreFailures },
  updated: { 200: refTo(BookUpdatedResponse), 400: refTo(BadBookUpdateResponse), ...writeOfOneBookFailures },
  // DELETE takes no body, but one sent along is still read (and ignored): over 1 MiB, it is a 413.
  deleted: { 200: refTo(BookDeletedResponse), 400: refTo(BadBookDeleteResponse), ...writeOfOneBookFailures },
};

const ETAG = 'ETag';
const etagHeader = Type.String({ description: 'The book\'s strong ETag, `"<id>-<version>"`: it changes with every write of the book' });
const replayedHeader = Type.Literal('true', { description: 'Present when this answer is the stored answer of an earlier request with the same Idempotency-Key' });
const idempotencyKey = Type.String({
  minLength: 1,
  maxLength: 255,
  description:
    'Makes the write happen at most once: a repeat with the same key and the same request gets the first answer again ' +
    '(marked `Idempotent-Replayed: true`) and writes nothing. 1 to 255 printable ASCII characters, bare or as a quoted string.',
});
const ifMatch = Type.String({ description: 'Only if the book\'s ETag is one of these (or `*`: any); otherwise 412 and nothing is written' });

/**
 * Documentation only (src/plugins/external/api-reference.ts): the headers each book operation reads,
 * and those its answers carry. The routes read them from the request themselves (a headers
 * schema would have every request validated for them).
 */
export const DocumentedBookHeaders: Record<string, { request?: TSchema; answers?: Record<number, Record<string, TSchema>> }> = {
  listBooks: {
    answers: {
      200: {
        Link: Type.String({
          description:
            'With `limit`, when more books follow: `</books?…&cursor=…>; rel="next"` (RFC 8288), the URL of the next page. The last page has none.',
        }),
        'X-Total-Count': Type.String({ description: 'On the first page (`limit`, no `cursor`): how many books match, counted' }),
        'X-Total-Count-Estimate': Type.String({
          description: 'Instead of X-Total-Count, when counting would cost more than the page (more than 10,000 books without `q`, more than 1,000 matches with it): an estimate, as docs/api.md says how',
        }),
        'Changes-Cursor': Type.String({
          description: 'The change feed\'s cursor read just before the books: GET /books/changes?after=<it> delivers every change the answer may miss',
        }),
      },
    },
  },
  applyBatch: {
    request: Type.Object({ 'Idempotency-Key': Type.Optional(idempotencyKey) }),
    answers: { 200: { 'Idempotent-Replayed': replayedHeader } },
  },
  followChanges: {
    request: Type.Object({
      'Last-Event-ID': Type.Optional(Type.String({ description: 'The id of the last event received: the stream resumes after it (wins over `after`)' })),
    }),
  },
  createBook: {
    request: Type.Object({ 'Idempotency-Key': Type.Optional(idempotencyKey) }),
    answers: { 201: { [ETAG]: etagHeader, 'Idempotent-Replayed': replayedHeader } },
  },
  getBook: {
    request: Type.Object({
      'If-None-Match': Type.Optional(Type.String({ description: 'An answer 304 (no body) if the book\'s ETag is one of these, or `*`' })),
    }),
    answers: { 200: { [ETAG]: etagHeader }, 304: { [ETAG]: etagHeader } },
  },
  updateBook: {
    request: Type.Object({ 'Idempotency-Key': Type.Optional(idempotencyKey), 'If-Match': Type.Optional(ifMatch) }),
    answers: { 200: { [ETAG]: etagHeader, 'Idempotent-Replayed': replayedHeader } },
  },
  deleteBook: {
    request: Type.Object({ 'Idempotency-Key': Type.Optional(idempotencyKey), 'If-Match': Type.Optional(ifMatch) }),
    answers: { 200: { 'Idempotent-Replayed': replayedHeader } },
  },
};

/**
 * Documentation only (src/plugins/external/api-reference.ts): GET /books's parameters. The
 * route reads them itself (src/http/list-query.ts), so that each bad value has its own message.
 */
export const DocumentedListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 1000, description: 'One page of at most this many books (with a `Link` to the next). Without it: every book asked for.' }),
  ),
  cursor: Type.Optional(Type.String({ description: 'Where the page starts: copied from the previous page\'s `Link: <…>; rel="next"`. Opaque.' })),
  sort: Type.Optional(
    Type.Union(
      ['id', 'title', 'author', 'year', '-id', '-title', '-author', '-year'].map((sort) => Type.Literal(sort)),
      { description: 'The order: by this field (`-`: descending), then by id in the same direction. Text is ordered by Unicode code point. Default: `id`.' },
    ),
  ),
  q: Type.Optional(
    Type.String({
      maxLength: SEARCH_MAX_LENGTH,
      description:
        'Search: each word of it (split at anything that is not a letter or digit) must start a word of the title or the author, ignoring case. ' +
        `At most ${SEARCH_MAX_TERMS} words.`,
    }),
  ),
});
