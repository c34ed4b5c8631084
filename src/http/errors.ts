// Every failure becomes the envelope: framework errors, validation, body limits, store
// outages and bugs. Internals (SQL, stacks, driver text) go to the log, never to the body.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { SECURITY_HEADERS } from './security-headers.js';
import { StoreUnavailableError, describeDriverError } from '../store/errors.js';
import { Messages, errorEnvelope } from './envelope.js';

/** Messages for 4xx statuses that have no operation-specific text. */
const GENERIC_MESSAGES: Record<number, string> = {
  400: Messages.badRequest,
  404: Messages.routeNotFound,
  405: Messages.methodNotAllowed,
  408: Messages.requestTimeout,
  413: Messages.bodyTooLarge,
  429: Messages.tooManyRequests,
  503: Messages.serviceUnavailable,
};

function isBodyError(error: FastifyError): boolean {
  return error.validation !== undefined || (error.statusCode === 400 && error.code?.startsWith('FST_ERR_CTP_'));
}

/** Why a body was refused, for the request's log line (the envelope itself stays fixed). */
const bodyProblems = new WeakMap<FastifyRequest, string>();

export function bodyProblemOf(request: FastifyRequest): string | undefined {
  return bodyProblems.get(request);
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/**
 * Which field failed and why, in words: `year: must be an integer`. Built from the schema's
 * rule, never from the value sent (a password must not reach the log).
 */
function describeBodyProblem(error: FastifyError): string {
  if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return 'body: empty';
  if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return 'body: not valid JSON, or a forbidden __proto__ / constructor.prototype key';
  }
  const issue = error.validation?.[0] as ValidationIssue | undefined;
  if (!issue) return `body: ${error.code ?? error.message}`;
  const path = issue.instancePath.slice(1).replaceAll('/', '.');
  const { params } = issue;
  switch (issue.keyword) {
    case 'required':
      return `${path ? `${path}.` : ''}${String(params.missingProperty)}: required`;
    case 'type':
      return `${path || 'body'}: must be ${params.type === 'object' ? 'a JSON object' : `of type ${String(params.type)}`}`;
    case 'minLength':
    case 'maxLength':
      return `${path}: must have ${issue.keyword === 'minLength' ? 'at least' : 'at most'} ${String(params.limit)} characters`;
    case 'minimum':
    case 'maximum':
      return `${path}: must be ${String(params.comparison)} ${String(params.limit)}`;
    case 'pattern':
      return `${path}: must contain a non-space character, and no NUL or lone surrogate`;
    default:
      return `${path || 'body'}: ${issue.message ?? issue.keyword}`;
  }
}

export function handleError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (isBodyError(error)) {
    bodyProblems.set(request, describeBodyProblem(error));
    const message = request.routeOptions.config.invalidBodyMessage ?? Messages.badRequest;
    return reply.code(400).send(errorEnvelope(400, message));
  }
  if (error instanceof StoreUnavailableError) {
    request.log.warn(describeDriverError(error.cause), 'store unavailable');
    return reply.code(503).send(errorEnvelope(503, Messages.serviceUnavailable));
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    return reply.code(status).send(errorEnvelope(status, GENERIC_MESSAGES[status] ?? STATUS_CODES[status] ?? Messages.badRequest));
  }
  request.log.error({ err: error }, 'request failed');
  return reply.code(500).send(errorEnvelope(500, Messages.internalError));
}

/**
 * Errors Node raises before a request exists (header overflow, malformed request line,
 * request timeout): answer with an envelope if the socket can still take it, then close.
 * Answered when nothing was written on the connection yet, as Node does, or when `afterAnswers`
 * says every earlier request on it was answered in full (the Node HTTP layer's
 * finish-answers-on-client-error part knows, and calls this once those answers are out:
 * src/http/node/client-error.ts); else the bytes could land inside an answer the client is
 * still reading, and the connection is only closed.
 */
export function handleClientError(error: Error & { code?: string }, socket: Socket, afterAnswers = false) {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  if (!socket.writable || (socket.bytesWritten > 0 && !afterAnswers)) {
    socket.destroy();
    return;
  }
  const status =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : error.code === 'HPE_HEADER_OVERFLOW' ? 431 : 400;
  const message = GENERIC_MESSAGES[status] ?? STATUS_CODES[status] ?? Messages.badRequest;
  const body = JSON.stringify(errorEnvelope(status, message));
  // Closed once the answer is flushed (earlier answers may still be in the socket's buffer).
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      Object.entries(SECURITY_HEADERS)
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join('') +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}
