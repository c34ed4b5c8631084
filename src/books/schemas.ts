// TypeBox schemas, written once: they validate request bodies (Ajv, no type coercion),
// drive response serialization (fast-json-stringify) and describe the API.
import { Type, type Static, type TSchema } from 'typebox';
import { Messages } from '../http/envelope.js';

export const TEXT_MAX_LENGTH = 500;
export const YEAR_MIN = -9999;
export const YEAR_MAX = 9999;

/**
 * 1 to 500 characters, not only white space. NUL and lone UTF-16 surrogates are refused
 * too: PostgreSQL cannot store NUL in text and no store can round-trip a lone surrogate,
 * so accepting them would mean a 5xx or a silently altered record.
 */
const TEXT_PATTERN = '^(?=[\\s\\S]*\\S)[^\\u0000\\uD800-\\uDFFF]*$';

const BookText = (description: string) =>
  Type.String({ minLength: 1, maxLength: TEXT_MAX_LENGTH, pattern: TEXT_PATTERN, description });

const BookYear = Type.Integer({ minimum: YEAR_MIN, maximum: YEAR_MAX, description: 'Year of the book' });

/** 64-bit ids travel as `bigint` inside the service and as exact JSON integers on the wire. */
export const BookId = Type.Unsafe<bigint>({ type: 'integer', minimum: 1, description: 'Unsigned 64-bit id' });

export const Book = Type.Object(
  {
    id: BookId,
    title: Type.String(),
    author: Type.String(),
    year: Type.Integer(),
  },
  { additionalProperties: false },
);
export type Book = Static<typeof Book>;

/** `id` and unknown fields are accepted and ignored (DESIGN.md). */
export const CreateBookBody = Type.Object({
  title: BookText('Title of the book'),
  author: BookText('Author of the book'),
  year: BookYear,
});
export type CreateBookBody = Static<typeof CreateBookBody>;

/** Any subset of the create fields; absent fields keep their stored values. */
export const UpdateBookBody = Type.Object({
  title: Type.Optional(BookText('Title of the book')),
  author: Type.Optional(BookText('Author of the book')),
  year: Type.Optional(BookYear),
});
export type UpdateBookBody = Static<typeof UpdateBookBody>;

export const LoginBody = Type.Object({
  username: Type.String(),
  password: Type.String(),
});
export type LoginBody = Static<typeof LoginBody>;

export const TokenResult = Type.Object({ token: Type.String() }, { additionalProperties: false });

export function Envelope<Data extends TSchema>(data: Data, description?: string) {
  return Type.Object(
    {
      status: Type.Integer(),
      message: Type.String(),
      data,
    },
    { additionalProperties: false, ...(description === undefined ? {} : { description }) },
  );
}

export const ErrorEnvelope = Envelope(Type.Null());

/** One documented error answer: its status and the fixed messages it can carry. */
export function ErrorAnswer(status: number, messages: readonly string[], description: string) {
  return Type.Object(
    {
      status: Type.Integer({ enum: [status] }),
      message: Type.String({ enum: [...messages] }),
      data: Type.Null(),
    },
    { additionalProperties: false, description },
  );
}

/** Answers every route can give: the store is down, or a bug. */
const commonErrors = {
  500: ErrorAnswer(500, [Messages.internalError], 'Unexpected failure; details are in the log only'),
  503: ErrorAnswer(503, [Messages.serviceUnavailable], 'The store cannot be reached; retry later'),
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
};

const unauthorized = ErrorAnswer(
  401,
  [Messages.tokenRequired, Messages.invalidToken],
  'Authorization header missing or empty, or the token is malformed, badly signed, not HMAC or expired',
);
const bodyTooLarge = ErrorAnswer(413, [Messages.bodyTooLarge], 'Body over 1 MiB');
const bookNotFound = ErrorAnswer(404, [Messages.bookNotFound], 'No book with that id (or the id is not a positive 64-bit integer)');
const invalidBook = ErrorAnswer(400, [Messages.invalidBook], 'The body cannot be read as a book; nothing is stored or changed');

export const BookResponses = {
  created: { 201: Envelope(Book, 'The stored book, with its new id'), 400: invalidBook, 401: unauthorized, 413: bodyTooLarge, ...commonErrors },
  list: { 200: Envelope(Type.Array(Book), 'Every book, ordered by id ascending'), 401: unauthorized, ...commonErrors },
  read: { 200: Envelope(Book, 'The book'), 401: unauthorized, 404: bookNotFound, ...commonErrors },
  updated: {
    200: Envelope(Book, 'The updated book'),
    400: invalidBook,
    401: unauthorized,
    404: bookNotFound,
    413: bodyTooLarge,
    ...commonErrors,
  },
  deleted: { 200: Envelope(Type.Null(), 'The book is gone; a later read answers 404'), 401: unauthorized, 404: bookNotFound, ...commonErrors },
};

export const TokenResponses = {
  200: Envelope(TokenResult, 'A token valid for 15 minutes'),
  400: ErrorAnswer(400, [Messages.invalidLoginPayload], 'The body is not an object with string username and password'),
  401: ErrorAnswer(401, [Messages.invalidCredentials], 'Username or password differs from the built-in pair'),
  413: bodyTooLarge,
  429: ErrorAnswer(429, [Messages.tooManyRequests], 'Too many failed logins from this address; see Retry-After'),
  500: ErrorAnswer(500, [Messages.tokenSigningFailed, Messages.internalError], 'Token signing failed'),
  503: commonErrors[503],
  '4xx': ErrorEnvelope,
  '5xx': ErrorEnvelope,
};
