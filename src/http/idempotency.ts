// Idempotency-Key on the book writes (the IETF httpapi draft "The Idempotency-Key HTTP Header
// Field"): the header read and checked, the request's fingerprint, and a stored answer sent
// again. What is stored, and when, is the store's (src/store/idempotency-keys.ts).
import { createHash, randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { KeyedRequest, StoredAnswer } from '../store/book-store.js';

/** Marks an answer sent again from the stored one. */
export const REPLAYED_HEADER = 'idempotent-replayed';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;

/** 1 to 255 printable ASCII characters. */
const KEY = /^[\x20-\x7e]{1,255}$/;
/** The draft's form, a Structured Field string: `"…"`, with `\"` and `\\` escapes. */
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\])*)"$/;

/** The key a request brings: undefined without the header, 'invalid' for a value that is not a key. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined | 'invalid' {
  const header = request.headers['idempotency-key'];
  if (header === undefined) return undefined;
  // Sent twice: Node joins the values with ", " (a string), which is not one key either.
  if (typeof header !== 'string') return 'invalid';
  const quoted = QUOTED.exec(header);
  const key = quoted ? quoted[1]!.replace(/\\(["\\])/g, '$1') : header;
  return KEY.test(key) ? key : 'invalid';
}

/** The key, and a digest of what the request asks (method, URL, body as parsed), for a fresh attempt. */
export function keyedRequest(request: FastifyRequest, key: string): KeyedRequest {
  const fingerprint = createHash('sha256')
    .update(`${request.method} ${request.url}\n${JSON.stringify(request.body) ?? ''}`)
    .digest('hex');
  return { key, fingerprint, owner: randomUUID() };
}

/** Sends a stored answer as it was stored (status, ETag, body), replayed or first. */
export function sendAnswer(reply: FastifyReply, answer: StoredAnswer, replayed: boolean): FastifyReply {
  if (answer.etag !== undefined) reply.header('etag', answer.etag);
  if (replayed) reply.header(REPLAYED_HEADER, 'true');
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}
