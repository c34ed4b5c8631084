// GET /metrics: Prometheus text, not an envelope; a failure while collecting is a 500 envelope.
import { Type } from 'typebox';
import { InternalErrorResponse, refTo } from './shared.js';

export const MetricsResponses = {
  200: {
    description: 'Metrics in the Prometheus text exposition format (version 0.0.4)',
    content: { 'text/plain': { schema: Type.String() } },
  },
  500: refTo(InternalErrorResponse),
};
