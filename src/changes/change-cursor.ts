// A change cursor: where a client stands in the change feed, opaque to it. It names the feed (a
// random id of the database, so a cursor of another database is not taken for this one's) and a
// position (src/store/change-log.ts). It travels as SSE event ids, `Last-Event-ID`, `after=`
// and the `Changes-Cursor` header of GET /books, so it holds only URL- and header-safe letters.

/** A cursor read back: the feed it names and the position. */
export interface ChangeCursor {
  feedId: string;
  position: bigint;
}

const DECODED = /^([0-9a-f]{16})\.(0|[1-9][0-9]{0,18})$/;
const MAX_POSITION = 2n ** 63n - 1n;

export function encodeChangeCursor({ feedId, position }: ChangeCursor): string {
  return Buffer.from(`${feedId}.${position}`).toString('base64url');
}

/** The cursor a text holds, or undefined when it is not one this service writes. */
export function decodeChangeCursor(text: string): ChangeCursor | undefined {
  if (text.length === 0 || text.length > 64 || !/^[A-Za-z0-9_-]+$/.test(text)) return undefined;
  const decoded = Buffer.from(text, 'base64url').toString('latin1');
  const match = DECODED.exec(decoded);
  if (!match) return undefined;
  const position = BigInt(match[2]!);
  if (position > MAX_POSITION) return undefined;
  const cursor = { feedId: match[1]!, position };
  // One spelling per cursor: a text that decodes to it but is not what encode writes was not issued.
  return encodeChangeCursor(cursor) === text ? cursor : undefined;
}
