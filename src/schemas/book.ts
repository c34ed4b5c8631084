// The book's schemas: the stored book, the create and update bodies, the `:id` parameter and
// every answer of the five book routes. Fields and limits come from src/books/book.ts.
import { Type, type Static, type TSchema } from 'typebox';
import { BOOK_TEXT_MAX_LENGTH, BOOK_YEAR_MAX, BOOK_YEAR_MIN, type BOOK_COLUMNS, type BOOK_FIELDS } from '../books/book.js';
import { Messages } from '../http/envelope.js';
import {
  BodyTooLargeResponse,
  BookNotFoundResponse,
  InternalErrorResponse,
  InvalidInputResponse,
  ServiceUnavailableResponse,
  UnauthorizedResponse,
  envelopeSchema,
  refTo,
} from './common.js';

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
 * Documentation only (see src/plugins/external/openapi.ts): requests are validated with BookIdParams.
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
  'Every book, ordered by id ascending (`[]` when there is none)',
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
/** Answers of every route that uses the store: it is down, or a bug. */
const storeFailures = { 500: refTo(InternalErrorResponse), 503: refTo(ServiceUnavailableResponse) };

const unauthorized = refTo(UnauthorizedResponse);
const bookNotFound = refTo(BookNotFoundResponse);
const invalidInput = refTo(InvalidInputResponse);
const bodyTooLarge = refTo(BodyTooLargeResponse);

export const BookResponses = {
  created: { 201: refTo(BookCreatedResponse), 400: invalidInput, 401: unauthorized, 413: bodyTooLarge, ...storeFailures },
  list: { 200: refTo(BookListResponse), 401: unauthorized, ...storeFailures },
  read: { 200: refTo(BookRetrievedResponse), 401: unauthorized, 404: bookNotFound, ...storeFailures },
  updated: {
    200: refTo(BookUpdatedResponse),
    400: invalidInput,
    401: unauthorized,
    404: bookNotFound,
    413: bodyTooLarge,
    ...storeFailures,
  },
  // DELETE takes no body, but one sent along is still read (and ignored): over 1 MiB, it is a 413.
  deleted: { 200: refTo(BookDeletedResponse), 401: unauthorized, 404: bookNotFound, 413: bodyTooLarge, ...storeFailures },
};
