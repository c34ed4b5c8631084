// POST /batch's schemas (docs/api.md "POST /batch"). The body's schema says what a batch looks
// like for the OpenAPI document and refuses what is not an object; each operation is read as
// the request it stands for by src/http/batch.ts. The answers: every operation's envelope, in
// order, or the one that failed; the 400s of a batch that cannot be read.
import { Type } from 'typebox';
import { BATCH_MAX_OPERATIONS } from '../books/book.js';
import { Messages } from '../http/envelope.js';
import { Book } from './book.js';
import {
  BodyTooLargeResponse,
  IdempotencyKeyInProgressResponse,
  IdempotencyKeyReusedResponse,
  InvalidIdempotencyKeyResponse,
  envelopeSchema,
  errorChoice,
  oneOf,
  refTo,
  tokenAndStoreFailures,
} from './shared.js';

export const BatchOperationSchema = Type.Object(
  {
    method: Type.Union([Type.Literal('POST'), Type.Literal('PUT'), Type.Literal('DELETE')]),
    path: Type.String({ description: '`/book` (POST), or `/book/<id>` (PUT, DELETE)' }),
    body: Type.Optional(Type.Unknown({ description: 'The body the single request would carry: a book (POST), some of its fields (PUT)' })),
    headers: Type.Optional(Type.Object({ 'If-Match': Type.Optional(Type.String()) }, { description: 'PUT and DELETE: If-Match, as on the single request' })),
  },
  { $id: 'BatchOperation', additionalProperties: false, description: 'One operation, written as the single request it stands for' },
);

export const BatchBody = Type.Object(
  { operations: Type.Array(refTo(BatchOperationSchema), { minItems: 1, maxItems: BATCH_MAX_OPERATIONS }) },
  { $id: 'BatchBody', description: `Up to ${BATCH_MAX_OPERATIONS} operations, applied in order in one transaction, or none of them` },
);

/** One operation's own envelope, as its single request would have answered. */
const OperationAnswer = Type.Object(
  { status: Type.Integer(), message: Type.String(), data: Type.Union([refTo(Book), Type.Null()]) },
  { additionalProperties: false },
);

export const BatchAppliedResponse = envelopeSchema(
  'BatchAppliedResponse',
  200,
  Messages.batchApplied,
  Type.Array(OperationAnswer),
  'Every operation applied, in one transaction: each one\'s own envelope, in order (201 and the book; 200 and the book; 200 and null for a delete)',
);

export const BatchNotAppliedResponse = Type.Object(
  {
    status: Type.Unsafe<number>({ type: 'integer', const: 422 }),
    message: Type.Unsafe<string>({ type: 'string', const: Messages.batchNotApplied }),
    data: Type.Object(
      {
        operation: Type.Integer({ description: 'Which operation failed: its place in `operations`, from 0' }),
        status: Type.Integer({ description: 'The status that operation would have had on its own: 400, 404 or 412' }),
        message: Type.String({ description: 'And its message' }),
      },
      { additionalProperties: false },
    ),
  },
  { $id: 'BatchNotAppliedResponse', additionalProperties: false, description: 'An operation would have been refused on its own: nothing was written' },
);

/** A batch that cannot be read: a 400 of its own for each way, and the malformed Idempotency-Key. */
export const { InvalidBatchResponse, InvalidBatchOperationResponse, UnknownBatchOperationResponse, NestedBatchResponse, BadBatchResponse } = errorChoice(
  'BadBatchResponse',
  'The batch cannot be read, or its Idempotency-Key header is malformed; nothing is written',
  {
    InvalidBatchResponse: [400, Messages.invalidBatch, `The body is not an object whose \`operations\` is a list of 1 to ${BATCH_MAX_OPERATIONS} operations; nothing is written`],
    InvalidBatchOperationResponse: [400, Messages.invalidBatchOperation, 'An operation is not an object of method, path, body and headers (If-Match) alone, with the right types; nothing is written'],
    UnknownBatchOperationResponse: [400, Messages.unknownBatchOperation, 'An operation asks for another method or path; nothing is written'],
    NestedBatchResponse: [400, Messages.nestedBatch, 'An operation is itself POST /batch; nothing is written'],
  },
  [InvalidIdempotencyKeyResponse],
);

export const BatchFailedResponse = oneOf(
  'BatchFailedResponse',
  'An operation would have been refused on its own, or the Idempotency-Key was used for another request; nothing is written',
  [BatchNotAppliedResponse, IdempotencyKeyReusedResponse],
);

export const BatchResponses = {
  200: refTo(BatchAppliedResponse),
  400: refTo(BadBatchResponse),
  409: refTo(IdempotencyKeyInProgressResponse),
  413: refTo(BodyTooLargeResponse),
  422: refTo(BatchFailedResponse),
  ...tokenAndStoreFailures,
};
