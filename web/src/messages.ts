// What went wrong, in words for the person: the service's answer or a failure to reach it. Shared
// by the sign-in form, the list and the book forms.
import { NetworkError, type Answer } from './api.js';

/** The service's own answer in words: `what`, then the status and the envelope's message. */
export function describe(answer: Answer, what: string): string {
  const reason: Record<number, string> = {
    400: 'the service found the values invalid',
    404: 'the service has no such book',
    409: 'the same request was still being processed; try again shortly',
    413: 'the request was too large',
    503: 'the service cannot reach its store; try again shortly',
  };
  const why = reason[answer.status];
  return `${what}: ${why ? `${why} ` : ''}(HTTP ${answer.status} “${answer.message}”).`;
}

export function messageOf(error: unknown): string {
  return error instanceof NetworkError ? error.message : `Something went wrong in the page: ${String(error)}`;
}
