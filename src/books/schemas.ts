// TypeBox schemas, written once: they validate request bodies (Ajv, no type coercion),
// drive response serialization (fast-json-stringify) and describe the API.
//
// Every body and every response envelope is a named schema (`$id`). registerOpenApi adds them
// all to the app as Fastify shared schemas, the routes refer to them by `$ref` (see `refTo`),
// and the OpenAPI document lists them under `components.schemas`, so a generated client gets
// one type per name.
import { Type, type Static, type TSchema } from 'typebox';
import { Messages } from '../http/envelope.js';
import { BOOK_TEXT_MAX_LENGTH, BOOK_YEAR_MAX, BOOK_YEAR_MIN } from './book.js';


/**
 * A reference to a named schema, carrying the TypeScript type of the schema it names, so that
 * handlers are typed as if the schema were written inline.
 */
export function refTo<Named extends TSchema>(schema: Named) {
  if (!('$id' in schema) || typeof schema.$id !== 'string') throw new Error('refTo: the schema has no $id');
  return Type.Unsafe<Static<Named>>(Type.Ref(schema.$id));
}

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
export const BookId = Type.Unsafe<bigint>({
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
 * Documentation only (see registerOpenApi): requests are validated with BookIdParams.
 */
export const DocumentedBookIdParams = Type.Object({
  id: Type.Integer({
    format: 'int64',
    minimum: 1,
    description: `Book id: ${ID_RANGE}. Any other value is answered 404 "${Messages.bookNotFound}".`,
  }),
});

export const Book = Type.Object(
  {
    id: BookId,
    title: Type.String({ description: 'Title of the book' }),
    author: Type.String({ description: 'Author of the book' }),
    year: Type.Integer({ description: 'Year of the book' }),
  },
  { $id: 'Book', additionalProperties: false, description: 'A stored book' },
);
export type Book = Static<typeof Book>;

/** `id` and unknown fields are accepted and ignored. */
export const CreateBookBody = Type.Object(
  {
    title: BookText('Title of the book'),
    author: BookText('Author of the book'),
    year: BookYear,
  },
  { $id: 'CreateBookBody', description: 'A new book: all three fields. `id` and unknown fields are ignored.' },
);
export type CreateBookBody = Static<typeof CreateBookBody>;

/** Any subset of the create fields; absent fields keep their stored values. */
export const UpdateBookBody = Type.Object(
  {
    title: Type.Optional(BookText('Title of the book')),
    author: Type.Optional(BookText('Author of the book')),
    year: Type.Optional(BookYear),
  },
  {
    $id: 'UpdateBookBody',
    description: 'Any subset of the book fields (`{}` changes nothing); absent fields keep their values.',
  },
);
export type UpdateBookBody = Static<typeof UpdateBookBody>;

export const LoginBody = Type.Object(
  {
    username: Type.String(),
    password: Type.String(),
  },
  { $id: 'LoginBody', description: 'The built-in credentials' },
);
export type LoginBody = Static<typeof LoginBody>;

export const TokenResult = Type.Object(
  { token: Type.String({ description: 'Send it in the Authorization header, raw or as `Bearer <token>`' }) },
  { $id: 'TokenResult', additionalProperties: false },
);

export const HealthResult = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'HealthResult', additionalProperties: false },
);

// `status` and `message` are constants in each envelope schema. fast-json-stringify writes a
// `const` as its literal without reading the value, which keeps the success path fast; so
// each schema below states exactly the status and message its handler sends, and a status
// with two possible messages is an `anyOf` of two envelopes. In TypeScript they stay number
// and string: handlers build envelopes with `envelope()` and `errorEnvelope()`.
const constStatus = (status: number) => Type.Unsafe<number>({ type: 'integer', const: status });
const constMessage = (message: string) => Type.Unsafe<string>({ type: 'string', const: message });

function envelopeSchema<Data extends TSchema>(name: string, status: number, message: string, data: Data, description: string) {
  return Type.Object(
    { status: constStatus(status), message: constMessage(message), data },
    { $id: name, additionalProperties: false, description },
  );
}

const errorSchema = (name: string, status: number, message: string, description: string) =>
  envelopeSchema(name, status, message, Type.Null(), description);

// Success envelopes.
export const TokenGeneratedResponse = envelopeSchema(
  'TokenGeneratedResponse',
  200,
  Messages.tokenGenerated,
  refTo(TokenResult),
  'A token valid for 15 minutes',
);
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
export const AliveResponse = envelopeSchema('AliveResponse', 200, Messages.alive, refTo(HealthResult), 'Alive');
export const ReadyResponse = envelopeSchema('ReadyResponse', 200, Messages.ready, refTo(HealthResult), 'Ready to serve');

// Error envelopes: `data` is always null.
export const InvalidLoginPayloadResponse = errorSchema(
  'InvalidLoginPayloadResponse',
  400,
  Messages.invalidLoginPayload,
  'The body is not a JSON object with string username and password',
);
export const InvalidInputResponse = errorSchema(
  'InvalidInputResponse',
  400,
  Messages.invalidBook,
  'The body cannot be read as a book; nothing is stored or changed',
);
export const InvalidCredentialsResponse = errorSchema(
  'InvalidCredentialsResponse',
  401,
  Messages.invalidCredentials,
  'Username or password differs from the configured pair',
);
export const TokenRequiredResponse = errorSchema(
  'TokenRequiredResponse',
  401,
  Messages.tokenRequired,
  'The Authorization header is missing or empty',
);
export const InvalidTokenResponse = errorSchema(
  'InvalidTokenResponse',
  401,
  Messages.invalidToken,
  'The token is malformed, badly signed, not HMAC-signed, without exp, expired, or not valid yet',
);
export const UnauthorizedResponse = Type.Union([refTo(TokenRequiredResponse), refTo(InvalidTokenResponse)], {
  $id: 'UnauthorizedResponse',
  description: 'No token, or a token that is not valid',
});
export const BookNotFoundResponse = errorSchema(
  'BookNotFoundResponse',
  404,
  Messages.bookNotFound,
  'No book with that id, or the id is not an integer from 1 to 9223372036854775807',
);
export const BodyTooLargeResponse = errorSchema('BodyTooLargeResponse', 413, Messages.bodyTooLarge, 'The request body is over 1 MiB');
export const TooManyRequestsResponse = errorSchema(
  'TooManyRequestsResponse',
  429,
  Messages.tooManyRequests,
  'Too many failed logins from this address; the Retry-After header says when to try again',
);
export const InternalErrorResponse = errorSchema(
  'InternalErrorResponse',
  500,
  Messages.internalError,
  'Unexpected failure; details are in the log only',
);
export const TokenSigningFailedResponse = errorSchema(
  'TokenSigningFailedResponse',
  500,
  Messages.tokenSigningFailed,
  'Token signing failed',
);
export const TokenServerErrorResponse = Type.Union([refTo(TokenSigningFailedResponse), refTo(InternalErrorResponse)], {
  $id: 'TokenServerErrorResponse',
  description: 'Token signing failed, or an unexpected failure',
});
export const ServiceUnavailableResponse = errorSchema(
  'ServiceUnavailableResponse',
  503,
  Messages.serviceUnavailable,
  'The store cannot be reached; retry later',
);

/** Every named schema, for app.addSchema (a schema must come after those it refers to). */
export const SHARED_SCHEMAS: readonly TSchema[] = [
  Book,
  CreateBookBody,
  UpdateBookBody,
  LoginBody,
  TokenResult,
  HealthResult,
  TokenGeneratedResponse,
  BookCreatedResponse,
  BookListResponse,
  BookRetrievedResponse,
  BookUpdatedResponse,
  BookDeletedResponse,
  AliveResponse,
  ReadyResponse,
  InvalidLoginPayloadResponse,
  InvalidInputResponse,
  InvalidCredentialsResponse,
  TokenRequiredResponse,
  InvalidTokenResponse,
  UnauthorizedResponse,
  BookNotFoundResponse,
  BodyTooLargeResponse,
  TooManyRequestsResponse,
  InternalErrorResponse,
  TokenSigningFailedResponse,
  TokenServerErrorResponse,
  ServiceUnavailableResponse,
];

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

/** POST /token touches no store: no 503. */
export const TokenResponses = {
  200: refTo(TokenGeneratedResponse),
  400: refTo(InvalidLoginPayloadResponse),
  401: refTo(InvalidCredentialsResponse),
  413: bodyTooLarge,
  429: refTo(TooManyRequestsResponse),
  500: refTo(TokenServerErrorResponse),
};

export const HealthResponses = {
  alive: { 200: refTo(AliveResponse) },
  /** The readiness check turns every failure into 503. */
  ready: { 200: refTo(ReadyResponse), 503: refTo(ServiceUnavailableResponse) },
};

/** GET /metrics: Prometheus text, not an envelope; a failure while collecting is a 500 envelope. */
export const MetricsResponses = {
  200: {
    description: 'Metrics in the Prometheus text exposition format (version 0.0.4)',
    content: { 'text/plain': { schema: Type.String() } },
  },
  500: refTo(InternalErrorResponse),
};
