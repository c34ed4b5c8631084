// What the schemas share: references to named schemas, the envelope with `const` status and
// message, and every error envelope (the resources share most of them).
//
// Every body and every response envelope is a named schema (`$id`): a Fastify shared schema.
// The app adds them all (src/app.ts; SHARED_SCHEMAS in src/plugins/external/api-reference.ts
// lists them in the document's order: that list imports every resource's schemas, which import
// this module, so it cannot live here), the routes refer to them by `$ref` (see `refTo`), and
// the OpenAPI document lists them under `components.schemas`, so a generated client gets one
// type per name.
import { Type, type Static, type TNull, type TSchema } from 'typebox';
import { Messages } from '../http/envelope.js';

/**
 * A reference to a named schema, carrying the TypeScript type of the schema it names, so that
 * handlers are typed as if the schema were written inline.
 */
export function refTo<Named extends TSchema>(schema: Named) {
  if (!('$id' in schema) || typeof schema.$id !== 'string') throw new Error('refTo: the schema has no $id');
  return Type.Unsafe<Static<Named>>(Type.Ref(schema.$id));
}

// `status` and `message` are constants in each envelope schema. fast-json-stringify writes a
// `const` as its literal without reading the value, which keeps the success path fast; so
// each envelope schema states exactly the status and message its handler sends, and a status
// with two possible messages is an `anyOf` of two envelopes. In TypeScript they stay number
// and string: handlers build envelopes with `envelope()` and `errorEnvelope()`.
const constStatus = (status: number) => Type.Unsafe<number>({ type: 'integer', const: status });
const constMessage = (message: string) => Type.Unsafe<string>({ type: 'string', const: message });

export function envelopeSchema<Data extends TSchema>(name: string, status: number, message: string, data: Data, description: string) {
  return Type.Object(
    { status: constStatus(status), message: constMessage(message), data },
    { $id: name, additionalProperties: false, description },
  );
}

/**
 * One documented answer that is any of several named envelopes (a status with more than one
 * message), itself named `id`: each member is referred to, and handlers see any member's type.
 */
export function oneOf<Member extends TSchema>(id: string, description: string, members: Member[]) {
  return Type.Unsafe<Static<Member>>(Type.Union(members.map((member) => refTo(member)), { $id: id, description }));
}

/** An error envelope: `data` is always null. */
type ErrorSchema = ReturnType<typeof envelopeSchema<TNull>>;

/** Error envelopes by name (their `$id`): status, message and what it means. */
export function errorSchemas<Name extends string>(rows: Record<Name, [status: number, message: string, description: string]>) {
  const schemas = {} as Record<Name, ErrorSchema>;
  for (const name of Object.keys(rows) as Name[]) {
    const [status, message, description] = rows[name];
    schemas[name] = envelopeSchema(name, status, message, Type.Null(), description);
  }
  return schemas;
}

/**
 * Error envelopes by name, as errorSchemas() makes them, and beside them the one answer named
 * `id` that is any of them or of `others` (a status whose several messages a route documents
 * as one response).
 */
export function errorChoice<Name extends string, Id extends string>(
  id: Id,
  description: string,
  rows: Record<Name, [status: number, message: string, description: string]>,
  others: TSchema[] = [],
) {
  const schemas = errorSchemas(rows);
  const choice = oneOf(id, description, [...Object.values<ErrorSchema>(schemas), ...others]);
  return { ...schemas, ...({ [id]: choice } as Record<Id, typeof choice>) };
}

/** Every error envelope the service sends (docs/api.md "Errors"). */
export const {
  InvalidLoginPayloadResponse,
  InvalidInputResponse,
  InvalidCredentialsResponse,
  TokenRequiredResponse,
  InvalidTokenResponse,
  BookNotFoundResponse,
  InvalidIdempotencyKeyResponse,
  InvalidIfMatchResponse,
  InvalidIfNoneMatchResponse,
  IdempotencyKeyInProgressResponse,
  PreconditionFailedResponse,
  IdempotencyKeyReusedResponse,
  BodyTooLargeResponse,
  TooManyRequestsResponse,
  InternalErrorResponse,
  TokenSigningFailedResponse,
  ServiceUnavailableResponse,
} = errorSchemas({
  InvalidLoginPayloadResponse: [400, Messages.invalidLoginPayload, 'The body is not a JSON object with string username and password'],
  InvalidInputResponse: [400, Messages.invalidBook, 'The body cannot be read as a book; nothing is stored or changed'],
  InvalidCredentialsResponse: [401, Messages.invalidCredentials, 'Username or password differs from the configured pair'],
  TokenRequiredResponse: [401, Messages.tokenRequired, 'The Authorization header is missing or empty'],
  InvalidTokenResponse: [401, Messages.invalidToken, 'The token is malformed, badly signed, not HMAC-signed, without exp, expired, or not valid yet'],
  BookNotFoundResponse: [404, Messages.bookNotFound, 'No book with that id, or the id is not an integer from 1 to 9223372036854775807'],
  InvalidIdempotencyKeyResponse: [400, Messages.invalidIdempotencyKey, 'The Idempotency-Key header is not 1 to 255 printable ASCII characters (bare, or as a quoted string); nothing is written'],
  InvalidIfMatchResponse: [400, Messages.invalidIfMatch, 'If-Match is neither * nor a list of quoted entity tags (an ETag without its quotes, say); nothing is compared or written'],
  InvalidIfNoneMatchResponse: [400, Messages.invalidIfNoneMatch, 'If-None-Match is neither * nor a list of quoted entity tags (an ETag without its quotes, say)'],
  IdempotencyKeyInProgressResponse: [409, Messages.idempotencyKeyInProgress, 'The first request with this Idempotency-Key has not answered yet; send this one again a little later, with the same key'],
  PreconditionFailedResponse: [412, Messages.preconditionFailed, 'If-Match names none of the book\'s current ETag: it was changed (or deleted and) since; nothing is written'],
  IdempotencyKeyReusedResponse: [422, Messages.idempotencyKeyReused, 'This Idempotency-Key was used for another request (method, URL or body); nothing is written'],
  BodyTooLargeResponse: [413, Messages.bodyTooLarge, 'The request body is over 1 MiB'],
  TooManyRequestsResponse: [429, Messages.tooManyRequests, 'Too many failed logins from this address; the Retry-After header says when to try again'],
  InternalErrorResponse: [500, Messages.internalError, 'Unexpected failure; details are in the log only'],
  TokenSigningFailedResponse: [500, Messages.tokenSigningFailed, 'Token signing failed'],
  ServiceUnavailableResponse: [503, Messages.serviceUnavailable, 'The store cannot be reached; retry later'],
});

export const UnauthorizedResponse = oneOf(
  'UnauthorizedResponse',
  'No token, or a token that is not valid',
  [TokenRequiredResponse, InvalidTokenResponse],
);

/** Answers of every route behind a token that uses the store: no valid token, the store down, a bug. */
export const tokenAndStoreFailures = { 401: refTo(UnauthorizedResponse), 500: refTo(InternalErrorResponse), 503: refTo(ServiceUnavailableResponse) };


