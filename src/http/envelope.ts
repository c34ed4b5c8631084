// The response envelope `{ status, message, data }` and every fixed message the service sends.

export const Messages = {
  tokenGenerated: 'Token generated successfully',
  invalidLoginPayload: 'Invalid request payload',
  invalidCredentials: 'Invalid credentials',
  tokenSigningFailed: 'Could not generate token',
  bookCreated: 'Book created successfully',
  booksRetrieved: 'Books retrieved successfully',
  bookRetrieved: 'Book retrieved successfully',
  bookUpdated: 'Book updated successfully',
  bookDeleted: 'Book deleted successfully',
  invalidBook: 'Invalid input',
  bookNotFound: 'Book not found',
  preconditionFailed: 'Precondition failed: the book has changed',
  invalidLimit: 'Invalid limit: expected an integer from 1 to 1000',
  invalidSort: 'Invalid sort: expected id, title, author or year, optionally prefixed by -',
  invalidSearch: 'Invalid q: at most 200 characters and 10 terms',
  cursorNotIssued: 'Invalid cursor: not issued by this service',
  cursorForOtherList: 'Invalid cursor: issued for another sort or search',
  changeCursorNotIssued: 'Invalid change cursor: not issued by this service',
  changeCursorExpired: 'Change cursor expired: list the books again',
  batchApplied: 'Batch applied',
  batchNotApplied: 'Batch not applied: an operation failed, nothing was written',
  invalidBatch: 'Invalid batch: expected {"operations": [...]} with 1 to 1000 operations',
  invalidBatchOperation: 'Invalid batch: an operation is not {"method", "path", "body", "headers"}',
  unknownBatchOperation: 'Invalid batch: an operation is not POST /book, PUT /book/:id or DELETE /book/:id',
  nestedBatch: 'Invalid batch: a batch cannot hold a batch',
  invalidIdempotencyKey: 'Invalid Idempotency-Key header',
  invalidIfMatch: 'Invalid If-Match header',
  invalidIfNoneMatch: 'Invalid If-None-Match header',
  idempotencyKeyInProgress: 'A request with this Idempotency-Key is still being processed',
  idempotencyKeyReused: 'Idempotency-Key already used for a different request',
  tokenRequired: 'Authorization token required',
  invalidToken: 'Invalid token',
  routeNotFound: 'Route not found',
  methodNotAllowed: 'Method not allowed',
  bodyTooLarge: 'Request body too large',
  tooManyRequests: 'Too many requests',
  serviceUnavailable: 'Service unavailable',
  internalError: 'Internal server error',
  badRequest: 'Bad request',
  requestTimeout: 'Request timeout',
  alive: 'Service is alive',
  ready: 'Service is ready',
} as const;

export type Message = (typeof Messages)[keyof typeof Messages];

export interface Envelope<T> {
  status: number;
  message: string;
  data: T;
}

export function envelope<T>(status: number, message: string, data: T): Envelope<T> {
  return { status, message, data };
}

export function errorEnvelope(status: number, message: string): Envelope<null> {
  return { status, message, data: null };
}

/**
 * An envelope's JSON text around data that is JSON text already: the same bytes as the
 * response serializer writes for envelope(status, message, data) (keys in that order, no
 * white space). Answers stored with an Idempotency-Key are kept as this text.
 */
export function envelopeJson(status: number, message: string, dataJson: string): string {
  return `{"status":${status},"message":${JSON.stringify(message)},"data":${dataJson}}`;
}
