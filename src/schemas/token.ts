// POST /token: the login body, the token, and every answer of the route.
import { Type } from 'typebox';
import { Messages } from '../http/envelope.js';
import {
  BodyTooLargeResponse,
  InternalErrorResponse,
  InvalidCredentialsResponse,
  InvalidLoginPayloadResponse,
  TokenSigningFailedResponse,
  TooManyRequestsResponse,
  envelopeSchema,
  oneOf,
  refTo,
} from './shared.js';

export const LoginBody = Type.Object(
  {
    username: Type.String(),
    password: Type.String(),
  },
  { $id: 'LoginBody', description: 'The built-in credentials' },
);

export const TokenResult = Type.Object(
  { token: Type.String({ description: 'Send it in the Authorization header, raw or as `Bearer <token>`' }) },
  { $id: 'TokenResult', additionalProperties: false },
);

export const TokenGeneratedResponse = envelopeSchema(
  'TokenGeneratedResponse',
  200,
  Messages.tokenGenerated,
  refTo(TokenResult),
  'A token valid for 15 minutes',
);
export const TokenServerErrorResponse = oneOf(
  'TokenServerErrorResponse',
  'Token signing failed, or an unexpected failure',
  [TokenSigningFailedResponse, InternalErrorResponse],
);

/** POST /token touches no store: no 503. */
export const TokenResponses = {
  200: refTo(TokenGeneratedResponse),
  400: refTo(InvalidLoginPayloadResponse),
  401: refTo(InvalidCredentialsResponse),
  413: refTo(BodyTooLargeResponse),
  429: refTo(TooManyRequestsResponse),
  500: refTo(TokenServerErrorResponse),
};
