// Every named schema, for app.addSchema (src/plugins/external/openapi.ts). The OpenAPI document
// lists them under `components.schemas` in this order; a schema comes after those it refers to.
import type { TSchema } from 'typebox';
import {
  Book,
  BookCreatedResponse,
  BookDeletedResponse,
  BookListResponse,
  BookRetrievedResponse,
  BookUpdatedResponse,
  CreateBookBody,
  UpdateBookBody,
} from './book.js';
import {
  BodyTooLargeResponse,
  BookNotFoundResponse,
  InternalErrorResponse,
  InvalidCredentialsResponse,
  InvalidInputResponse,
  InvalidLoginPayloadResponse,
  InvalidTokenResponse,
  ServiceUnavailableResponse,
  TokenRequiredResponse,
  TokenSigningFailedResponse,
  TooManyRequestsResponse,
  UnauthorizedResponse,
} from './common.js';
import { AliveResponse, HealthResult, ReadyResponse } from './health.js';
import { LoginBody, TokenGeneratedResponse, TokenResult, TokenServerErrorResponse } from './token.js';

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
