// GET /books/changes's schemas: the stream itself (documentation: its answer is written as
// server-sent events, not serialized) and the errors of its cursor (docs/api.md "GET /books/changes").
import { Type } from 'typebox';
import { Messages } from '../http/envelope.js';
import { errorSchemas } from './shared.js';

export const {
  ChangeCursorNotIssuedResponse,
  ChangeCursorExpiredResponse,
} = errorSchemas({
  ChangeCursorNotIssuedResponse: [400, Messages.changeCursorNotIssued, '`Last-Event-ID` or `after` is not a cursor this service issued (changed, from another database, or ahead of every change)'],
  ChangeCursorExpiredResponse: [410, Messages.changeCursorExpired, 'The changes after this cursor are older than CHANGES_RETENTION and no longer kept: list the books again and follow from the list\'s Changes-Cursor'],
});

export const ChangesQuery = Type.Object(
  {
    after: Type.Optional(
      Type.String({ description: 'A cursor (an event id, or a list\'s Changes-Cursor): the changes after it. `Last-Event-ID` wins when both are sent. Neither: from now on.' }),
    ),
  },
  { additionalProperties: true },
);

/** The stream, for the OpenAPI document: Fastify never serializes it. */
export const ChangeStream = Type.String({
  description:
    'Server-sent events (text/event-stream), one per committed change in commit order: `id:` its cursor, `event:` created, updated or deleted, ' +
    '`data:` the book as JSON with its `version` (a delete: `{"id":…,"version":…}`, the version it had); `: heartbeat` comments every 15 s',
});
