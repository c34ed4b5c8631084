// Idempotency-Key on POST /book, PUT /book/:id and DELETE /book/:id (issue 22): which keys are
// valid (1 to 255 printable ASCII characters, optionally quoted; the token is checked first);
// a repeated request answers the stored answer byte for byte with `Idempotent-Replayed: true`
// and writes nothing, even after the book changed or went; the same key for another request
// is 422; answers that wrote nothing are not stored; and keys expire after IDEMPOTENCY_TTL.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiClient, ApiResponse } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import {
  INVALID_IDEMPOTENCY_KEY,
  KEY_USED_FOR_ANOTHER_REQUEST,
  PRECONDITION_FAILED,
  bookCount,
  booksTitled,
  describeAnswer,
  expectAnswer,
  headerOf,
  isReplayed,
  rawRequest,
  strongEtagOf,
} from '../helpers/client/idempotency.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** A key no other test uses. */
const freshKey = () => `key-${randomUUID()}`;

/** 255 printable ASCII characters, every one from 0x20 to 0x7E, spaces inside; no quote at either end. */
const LONGEST_KEY = Array.from({ length: 255 }, (_, i) => String.fromCharCode(0x21 + (i % 0x5e))).join('').replace(/^(.{100})./, '$1 ');

/** Header values that are no key, as the bytes sent (valid JSON body and token beside them). */
const MALFORMED_KEYS: Array<[string, Buffer]> = [
  ['empty', Buffer.alloc(0)],
  ['256 characters', Buffer.from('k'.repeat(256), 'latin1')],
  ['256 characters, quoted', Buffer.from(`"${'k'.repeat(256)}"`, 'latin1')],
  ['an empty quoted string ""', Buffer.from('""', 'latin1')],
  ['"é" as UTF-8 bytes', Buffer.from('clé-é', 'utf8')],
  ['"é" as one Latin-1 byte (0xE9)', Buffer.from('cl\xe9', 'latin1')],
  ['a tab (control character) inside', Buffer.from('ab\tcd', 'latin1')],
];

forEachStore((kind) => {
  describe('Idempotency-Key', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    /** `key` undefined: no Idempotency-Key header; `auth` null: no token. A string body is sent as is. */
    function send(
      method: string,
      path: string,
      { key, body, headers, auth = token }: { key?: string; body?: unknown; headers?: Record<string, string>; auth?: string | null } = {},
    ): Promise<ApiResponse> {
      const all: Record<string, string> = { ...headers };
      if (key !== undefined) all['idempotency-key'] = key;
      if (typeof body === 'string') all['content-type'] = 'application/json';
      return service.client.request(method, path, { body, headers: all, ...(auth === null ? {} : { token: auth }) });
    }

    const newBook = (title: string) => service.client.createBook(token, { title, author: 'Ursula K. Le Guin', year: 1969 });

    async function expectStored(book: Book) {
      expectEnvelope(await send('GET', `/book/${book.id}`), 200, 'Book retrieved successfully', book);
    }

    /** The second answer is the first one replayed: same status, body bytes and ETag, marked as a replay. */
    function expectReplayOf(replay: ApiResponse, original: ApiResponse) {
      expect(isReplayed(original), `the first answer is no replay: ${describeAnswer(original)}`).toBe(false);
      expect(replay.status, describeAnswer(replay)).toBe(original.status);
      expect(replay.text, 'the body, byte for byte').toBe(original.text);
      expect(headerOf(replay, 'etag'), 'the ETag').toBe(headerOf(original, 'etag'));
      expect(headerOf(replay, 'content-type')).toMatch(/^application\/json(;|$)/);
      expect(headerOf(replay, 'idempotent-replayed'), describeAnswer(replay)).toBe('true');
    }

    describe('which keys are valid', () => {
      it.each(MALFORMED_KEYS)('a key that is %s → 400 "Invalid Idempotency-Key header" on POST, nothing written', async (_name, keyBytes) => {
        const title = `Malformed ${randomUUID()}`;
        const response = await rawRequest(service.current.baseUrl, 'POST', '/book', {
          token,
          keyBytes,
          body: JSON.stringify({ title, author: 'Nobody', year: 2000 }),
        });
        expectAnswer(response, INVALID_IDEMPOTENCY_KEY);
        expect(await booksTitled(service.client, token, title)).toEqual([]);
      });

      it('a 256-character key → 400 on PUT (book unchanged) and on DELETE (book still there)', async () => {
        const book = await newBook('Untouched');
        const key = 'k'.repeat(256);
        expectAnswer(await send('PUT', `/book/${book.id}`, { key, body: { title: 'Changed' } }), INVALID_IDEMPOTENCY_KEY);
        expectAnswer(await send('DELETE', `/book/${book.id}`, { key }), INVALID_IDEMPOTENCY_KEY);
        await expectStored(book);
      });

      it('a 255-character key of every printable ASCII character → 201, and it replays', async () => {
        const body = { title: `Longest key ${randomUUID()}`, author: 'Someone', year: 2001 };
        const first = await send('POST', '/book', { key: LONGEST_KEY, body });
        expect(first.status, describeAnswer(first)).toBe(201);
        expectReplayOf(await send('POST', '/book', { key: LONGEST_KEY, body }), first);
        expect(await booksTitled(service.client, token, body.title)).toHaveLength(1);
      });

      it('the quoted form "abc" is the key abc, both ways round', async () => {
        for (const [firstForm, secondForm] of [
          [(key: string) => `"${key}"`, (key: string) => key],
          [(key: string) => key, (key: string) => `"${key}"`],
        ] as const) {
          const key = freshKey();
          const body = { title: `Quoted ${key}`, author: 'Someone', year: 2002 };
          const first = await send('POST', '/book', { key: firstForm(key), body });
          expect(first.status, describeAnswer(first)).toBe(201);
          expectReplayOf(await send('POST', '/book', { key: secondForm(key), body }), first);
          expect(await booksTitled(service.client, token, body.title)).toHaveLength(1);
        }
      });

      it('a quoted 255-character key is valid (the quotes are not part of the key)', async () => {
        const key = (randomUUID() + 'q'.repeat(255)).slice(0, 255);
        const body = { title: `Quoted longest ${randomUUID()}`, author: 'Someone', year: 2003 };
        const first = await send('POST', '/book', { key: `"${key}"`, body });
        expect(first.status, describeAnswer(first)).toBe(201);
        expectReplayOf(await send('POST', '/book', { key, body }), first);
      });

      it('the token is checked before the key: a bad key without a token → 401, with a bad token → 401, with a valid one → 400', async () => {
        const body = { title: `Token first ${randomUUID()}`, author: 'Nobody', year: 2000 };
        const key = 'k'.repeat(256);
        expectEnvelope(await send('POST', '/book', { key, body, auth: null }), 401, 'Authorization token required', null);
        expectEnvelope(await send('POST', '/book', { key, body, auth: 'not-a-jwt' }), 401, 'Invalid token', null);
        expectAnswer(await send('POST', '/book', { key, body }), INVALID_IDEMPOTENCY_KEY);
        expect(await booksTitled(service.client, token, body.title)).toEqual([]);
      });
    });

    describe('replays', () => {
      it('POST repeated with its key → the stored 201 byte for byte, same ETag, Idempotent-Replayed: true; one book', async () => {
        const key = freshKey();
        const body = { title: `Replayed ${key}`, author: 'Someone', year: 2004 };
        const before = await bookCount(service.client, token);
        const first = await send('POST', '/book', { key, body });
        expect(first.status, describeAnswer(first)).toBe(201);
        expect(headerOf(first, 'idempotent-replayed'), 'the first answer carries no Idempotent-Replayed').toBeUndefined();
        strongEtagOf(first);
        for (let repeat = 0; repeat < 3; repeat++) expectReplayOf(await send('POST', '/book', { key, body }), first);
        expect(await bookCount(service.client, token)).toBe(before + 1);
        expect(await booksTitled(service.client, token, body.title)).toEqual([(first.body.data as Book)]);
      });

      it('the same JSON with other white space → a replay', async () => {
        const key = freshKey();
        const title = `White space ${key}`;
        const first = await send('POST', '/book', { key, body: `{"title":"${title}","author":"Someone","year":2005}` });
        expect(first.status, describeAnswer(first)).toBe(201);
        expectReplayOf(await send('POST', '/book', { key, body: `{\n  "title" : "${title}",\t"author": "Someone" ,\r\n "year":   2005 }\n` }), first);
        expect(await booksTitled(service.client, token, title)).toHaveLength(1);
      });

      it('PUT repeated after the book changed again → the stored answer (the old values, the old ETag); nothing written', async () => {
        const book = await newBook('Before');
        const key = freshKey();
        const first = await send('PUT', `/book/${book.id}`, { key, body: { title: 'Keyed update' } });
        expectEnvelope(first, 200, 'Book updated successfully', { ...book, title: 'Keyed update' });
        strongEtagOf(first);
        const later = await send('PUT', `/book/${book.id}`, { body: { title: 'Changed since' } });
        expect(later.status).toBe(200);
        const replay = await send('PUT', `/book/${book.id}`, { key, body: { title: 'Keyed update' } });
        expectReplayOf(replay, first);
        expect(headerOf(replay, 'etag')).not.toBe(headerOf(later, 'etag'));
        await expectStored({ ...book, title: 'Changed since' });
      });

      it('DELETE repeated after it deleted → the stored 200, not 404', async () => {
        const book = await newBook('Deleted once');
        const key = freshKey();
        const first = await send('DELETE', `/book/${book.id}`, { key });
        expectEnvelope(first, 200, 'Book deleted successfully', null);
        const replay = await send('DELETE', `/book/${book.id}`, { key });
        expectReplayOf(replay, first);
        expectEnvelope(replay, 200, 'Book deleted successfully', null);
        // Without the key, the same DELETE is a new request: the book is gone.
        expectEnvelope(await send('DELETE', `/book/${book.id}`), 404, 'Book not found', null);
      });
    });

    describe('the same key for another request → 422, nothing written', () => {
      it('another body on POST', async () => {
        const key = freshKey();
        const first = await send('POST', '/book', { key, body: { title: `First ${key}`, author: 'Someone', year: 2006 } });
        expect(first.status, describeAnswer(first)).toBe(201);
        const other = await send('POST', '/book', { key, body: { title: `Second ${key}`, author: 'Someone', year: 2006 } });
        expectAnswer(other, KEY_USED_FOR_ANOTHER_REQUEST);
        expect(await booksTitled(service.client, token, `Second ${key}`)).toEqual([]);
        expect(await booksTitled(service.client, token, `First ${key}`)).toHaveLength(1);
      });

      it('the same fields in another order (key order counts)', async () => {
        const key = freshKey();
        const title = `Field order ${key}`;
        const first = await send('POST', '/book', { key, body: `{"title":"${title}","author":"Someone","year":2007}` });
        expect(first.status, describeAnswer(first)).toBe(201);
        expectAnswer(await send('POST', '/book', { key, body: `{"author":"Someone","title":"${title}","year":2007}` }), KEY_USED_FOR_ANOTHER_REQUEST);
        expect(await booksTitled(service.client, token, title)).toHaveLength(1);
      });

      it('another path: a key used on PUT /book/A, sent with the same body to PUT /book/B', async () => {
        const a = await newBook('Book A');
        const b = await newBook('Book B');
        const key = freshKey();
        expect((await send('PUT', `/book/${a.id}`, { key, body: { year: 1 } })).status).toBe(200);
        expectAnswer(await send('PUT', `/book/${b.id}`, { key, body: { year: 1 } }), KEY_USED_FOR_ANOTHER_REQUEST);
        await expectStored(b);
      });

      it('another method: a key used on POST, sent with PUT and with DELETE of the book it made', async () => {
        const key = freshKey();
        const body = { title: `Method ${key}`, author: 'Someone', year: 2008 };
        const first = await send('POST', '/book', { key, body });
        expect(first.status, describeAnswer(first)).toBe(201);
        const book = first.body.data as Book;
        expectAnswer(await send('PUT', `/book/${book.id}`, { key, body }), KEY_USED_FOR_ANOTHER_REQUEST);
        expectAnswer(await send('DELETE', `/book/${book.id}`, { key }), KEY_USED_FOR_ANOTHER_REQUEST);
        await expectStored(book);
      });
    });

    describe('answers that wrote nothing are not stored: the key stays free', () => {
      it('after a 404 (PUT of a missing book), the same PUT is 404 again, no replay; the key then creates a book', async () => {
        const gone = await newBook('Gone');
        expect((await send('DELETE', `/book/${gone.id}`)).status).toBe(200);
        const key = freshKey();
        for (let attempt = 0; attempt < 2; attempt++) {
          const missing = await send('PUT', `/book/${gone.id}`, { key, body: { title: 'Ghost' } });
          expectEnvelope(missing, 404, 'Book not found', null);
          expect(isReplayed(missing)).toBe(false);
        }
        const created = await send('POST', '/book', { key, body: { title: `After 404 ${key}`, author: 'Someone', year: 2009 } });
        expect(created.status, describeAnswer(created)).toBe(201);
        expect(isReplayed(created)).toBe(false);
        expectReplayOf(await send('POST', '/book', { key, body: { title: `After 404 ${key}`, author: 'Someone', year: 2009 } }), created);
      });

      it('after a 400 (an invalid body), the key creates a book with a valid one', async () => {
        const key = freshKey();
        expectEnvelope(await send('POST', '/book', { key, body: { title: '', author: 'Someone', year: 2010 } }), 400, 'Invalid input', null);
        const created = await send('POST', '/book', { key, body: { title: `After 400 ${key}`, author: 'Someone', year: 2010 } });
        expect(created.status, describeAnswer(created)).toBe(201);
        expect(isReplayed(created)).toBe(false);
        // …and from then on the key is that request's.
        expectReplayOf(await send('POST', '/book', { key, body: { title: `After 400 ${key}`, author: 'Someone', year: 2010 } }), created);
        expect(await booksTitled(service.client, token, `After 400 ${key}`)).toHaveLength(1);
      });

      it('after a 412 (a stale If-Match), the same PUT with the current ETag is applied, not the 412 replayed', async () => {
        const created = await send('POST', '/book', { body: { title: 'Conditional', author: 'Someone', year: 2011 } });
        const book = created.body.data as Book;
        const stale = strongEtagOf(created);
        const changed = await send('PUT', `/book/${book.id}`, { body: { year: 2012 } });
        const current = strongEtagOf(changed);
        const key = freshKey();
        expectAnswer(await send('PUT', `/book/${book.id}`, { key, body: { title: 'Keyed' }, headers: { 'if-match': stale } }), PRECONDITION_FAILED);
        const applied = await send('PUT', `/book/${book.id}`, { key, body: { title: 'Keyed' }, headers: { 'if-match': current } });
        expectEnvelope(applied, 200, 'Book updated successfully', { ...book, title: 'Keyed', year: 2012 });
        expect(isReplayed(applied)).toBe(false);
        await expectStored({ ...book, title: 'Keyed', year: 2012 });
      });
    });
  });

  describe('Idempotency-Key with IDEMPOTENCY_TTL=1', () => {
    const service = useService(kind, { IDEMPOTENCY_TTL: '1' });
    let token: string;
    let client: ApiClient;
    beforeAll(async () => {
      client = service.client;
      token = await client.token();
    });

    it('while the key lives, another body is 422; 2.5 s later it is forgotten: another body → 201, a new book', async () => {
      const key = freshKey();
      const post = (title: string) => client.request('POST', '/book', { token, body: { title, author: 'Someone', year: 2013 }, headers: { 'idempotency-key': key } });
      const first = await post(`Before expiry ${key}`);
      expect(first.status, describeAnswer(first)).toBe(201);
      expectAnswer(await post(`While alive ${key}`), KEY_USED_FOR_ANOTHER_REQUEST);
      await sleep(2_500);
      const afterExpiry = await post(`After expiry ${key}`);
      expect(afterExpiry.status, describeAnswer(afterExpiry)).toBe(201);
      expect(isReplayed(afterExpiry)).toBe(false);
      expect((afterExpiry.body.data as Book).id).not.toBe((first.body.data as Book).id);
      expect(await booksTitled(client, token, `Before expiry ${key}`)).toHaveLength(1);
      expect(await booksTitled(client, token, `After expiry ${key}`)).toHaveLength(1);
    });
  });
});
