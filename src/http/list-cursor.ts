// The `cursor` of GET /books: where the next page starts (the last book's sort value and id),
// for which sort and search, signed with a key derived from SECRET_TOKEN so that the service
// can tell its own cursors from anything else. Opaque to clients; every instance that shares
// the secret reads every other's cursors. A cursor says nothing a client could not see in the
// page it came from (the sort, a digest of the search, the last book's value and id).
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { BookSort, KeysetPosition } from '../books/book-query.js';

/** Bytes of HMAC-SHA256 kept in a cursor: forging one takes 2^128 tries. */
const MAC_BYTES = 16;

/** What a request's cursor says, once read: where its page starts, or why it cannot be used. */
export type CursorReading = KeysetPosition | 'not-issued' | 'other-list';

export interface ListCursors {
  /** The cursor of the page after `last` in this sort and search. */
  issue(sort: BookSort, terms: readonly string[], last: KeysetPosition): string;
  read(cursor: string, sort: BookSort, terms: readonly string[]): CursorReading;
}

export function listCursors(secret: string): ListCursors {
  // A key of its own: a cursor's MAC is never a token's signature, nor the other way round.
  const key = createHmac('sha256', secret).update('book-list-cursor').digest();
  const mac = (payload: string) => createHmac('sha256', key).update(payload).digest().subarray(0, MAC_BYTES);
  return {
    issue(sort, terms, last) {
      const value = typeof last.value === 'bigint' ? String(last.value) : last.value;
      const payload = Buffer.from(JSON.stringify([listOf(sort, terms), value, String(last.id)])).toString('base64url');
      return `${payload}.${mac(payload).toString('base64url')}`;
    },
    read(cursor, sort, terms) {
      const [payload, signature, extra] = cursor.split('.');
      if (payload === undefined || signature === undefined || extra !== undefined) return 'not-issued';
      // Compared as text: base64 decoding ignores the last character's spare bits, so two
      // texts decode to the same bytes, and only the one issued is the service's cursor.
      const given = Buffer.from(signature);
      const expected = Buffer.from(mac(payload).toString('base64url'));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'not-issued';
      // Signed by this service: its shape is ours.
      const [list, value, id] = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [string, string | number, string];
      if (list !== listOf(sort, terms)) return 'other-list';
      return { value: sort.field === 'id' ? BigInt(id) : value, id: BigInt(id) };
    },
  };
}

/** Which list a cursor belongs to: the sort and a digest of the search terms. */
function listOf(sort: BookSort, terms: readonly string[]): string {
  const search = createHash('sha256').update(terms.join(' ')).digest('base64url').slice(0, 11);
  return `${sort.descending ? '-' : ''}${sort.field} ${search}`;
}
