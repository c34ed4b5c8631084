// GET /healthz and GET /readyz: the health result and their answers.
import { Type } from 'typebox';
import { Messages } from '../http/envelope.js';
import { ServiceUnavailableResponse, envelopeSchema, refTo } from './shared.js';

export const HealthResult = Type.Object(
  { status: Type.Literal('ok') },
  { $id: 'HealthResult', additionalProperties: false },
);

export const AliveResponse = envelopeSchema('AliveResponse', 200, Messages.alive, refTo(HealthResult), 'Alive');
export const ReadyResponse = envelopeSchema('ReadyResponse', 200, Messages.ready, refTo(HealthResult), 'Ready to serve');

export const HealthResponses = {
  alive: { 200: refTo(AliveResponse) },
  /** The readiness check turns every failure into 503. */
  ready: { 200: refTo(ReadyResponse), 503: refTo(ServiceUnavailableResponse) },
};
