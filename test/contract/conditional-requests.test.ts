// ETag and conditional requests (issue 22): a strong ETag on GET, POST and PUT of one book, new
// after every PUT; If-None-Match on GET (304, weak comparison, `*`); If-Match on PUT and DELETE
// (412 when the book has changed, strong comparison, `*`), checked after 401, 404 and 400; the
// check and the write one atomic step (two PUTs racing on one ETag: one wins); and nothing
// changed for clients that send none of these headers.
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiResponse } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { PRECONDITION_FAILED, describeAnswer, expectAnswer, headerOf, strongEtagOf } from '../helpers/client/idempotency.js';
import { portOf, rawRequest } from '../helpers/client/raw-http.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';

/** Rounds of the two-PUT race: one round can pass by luck (the two never overlap). */
const RACE_ROUNDS = 20;

forEachStore((kind) => {
  describe('ETag, If-None-Match and If-Match', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
    });

    /** `auth`: the token to send (default a valid one), or null for none. */
    function send(method: string, path: string, { body, headers, auth = token }: { body?: unknown; headers?: Record<string, string>; auth?: string | null } = {}) {
      return service.client.request(method, path, { body, headers, ...(auth === null ? {} : { token: auth }) });
    }

    /** A new book and the ETag its 201 carried. */
    async function created(title = 'Solaris'): Promise<{ book: Book; etag: string }> {
      const response = await send('POST', '/book', { body: { title, author: 'Stanisław Lem', year: 1961 } });
      expect(response.status, response.text).toBe(201);
      return { book: response.body.data as Book, etag: strongEtagOf(response) };
    }

    /** GET /book/:id answers 200 with exactly `book`; its ETag. */
    async function expectStored(book: Book): Promise<string> {
      const response = await send('GET', `/book/${book.id}`);
      expectEnvelope(response, 200, 'Book retrieved successfully', book);
      return strongEtagOf(response);
    }

    /** A book that was created and deleted, and the ETag it had: a stale ETag of a missing book. */
    async function deletedBook(): Promise<{ book: Book; etag: string }> {
      const made = await created('Deleted');
      expect((await send('DELETE', `/book/${made.book.id}`)).status).toBe(200);
      return made;
    }

    /** PUTs `changes` without conditions and returns the new ETag (the old one is then stale). */
    async function changeBehindTheClientsBack(book: Book, changes: Partial<Book>): Promise<string> {
      const response = await send('PUT', `/book/${book.id}`, { body: changes });
      expect(response.status, response.text).toBe(200);
      return strongEtagOf(response);
    }

    const notModified = (response: ApiResponse, etag: string) => {
      expect(response.status, describeAnswer(response)).toBe(304);
      expect(response.text, 'a 304 has no body').toBe('');
      expect(headerOf(response, 'etag'), 'a 304 carries the ETag').toBe(etag);
    };

    describe('ETag', () => {
      it('POST answers 201 with a strong ETag; GET answers the same one, again and again', async () => {
        const { book, etag } = await created();
        for (let read = 0; read < 3; read++) expect(await expectStored(book)).toBe(etag);
      });

      it('PUT answers 200 with a new strong ETag, which GET then answers', async () => {
        const { book, etag } = await created();
        const response = await send('PUT', `/book/${book.id}`, { body: { title: 'The Invincible' } });
        expectEnvelope(response, 200, 'Book updated successfully', { ...book, title: 'The Invincible' });
        const afterPut = strongEtagOf(response);
        expect(afterPut).not.toBe(etag);
        expect(await expectStored({ ...book, title: 'The Invincible' })).toBe(afterPut);
      });

      it('every PUT gives the book another ETag (three in a row: four different ones)', async () => {
        const { book, etag } = await created();
        const etags = [etag];
        for (const year of [1962, 1963, 1964]) etags.push(await changeBehindTheClientsBack(book, { year }));
        expect(new Set(etags).size).toBe(4);
        expect(await expectStored({ ...book, year: 1964 })).toBe(etags[3]);
      });

      it('two books have different ETags', async () => {
        const first = await created('First');
        const second = await created('Second');
        expect(first.etag).not.toBe(second.etag);
      });

      it('GET /book/:id carries an ETag; GET /books and DELETE carry none', async () => {
        const { book } = await created();
        await expectStored(book);
        const list = await send('GET', '/books');
        expect(list.status).toBe(200);
        expect(headerOf(list, 'etag'), 'GET /books').toBeUndefined();
        const deleted = await send('DELETE', `/book/${book.id}`);
        expectEnvelope(deleted, 200, 'Book deleted successfully', null);
        expect(headerOf(deleted, 'etag'), 'DELETE').toBeUndefined();
      });
    });

    describe('If-None-Match on GET /book/:id', () => {
      it('the current ETag → 304, empty body, with the ETag', async () => {
        const { book, etag } = await created();
        notModified(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': etag } }), etag);
      });

      it('a 304 says it has no body (no Content-Length but 0, no Content-Type): a client reading it on a raw socket gets the whole answer at once', async () => {
        const { book, etag } = await created();
        const exchange = await rawRequest(
          portOf(service.current.baseUrl),
          { method: 'GET', path: `/book/${book.id}`, headers: [['Authorization', token], ['If-None-Match', etag]] },
          { timeoutMs: 3_000 },
        );
        expect(exchange.response?.status, exchange.received.toString('latin1')).toBe(304);
        expect(exchange.response?.headers['content-length'] ?? '0').toBe('0');
        expect(exchange.response?.headers['content-type']).toBeUndefined();
        expect(exchange.response?.headers.etag).toBe(etag);
      });

      it('`*` → 304 for an existing book', async () => {
        const { book, etag } = await created();
        notModified(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': '*' } }), etag);
      });

      it('a list holding the current ETag among others → 304', async () => {
        const { book, etag } = await created();
        notModified(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': `"nope-1", ${etag}, "nope-2"` } }), etag);
      });

      it('W/ + the current ETag → 304 (If-None-Match compares weakly)', async () => {
        const { book, etag } = await created();
        notModified(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': `W/${etag}` } }), etag);
      });

      it('an ETag the book had before a PUT → 200 with the book as it is now and its new ETag', async () => {
        const { book, etag: old } = await created();
        const current = await changeBehindTheClientsBack(book, { title: 'Eden' });
        const response = await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': old } });
        expectEnvelope(response, 200, 'Book retrieved successfully', { ...book, title: 'Eden' });
        expect(strongEtagOf(response)).toBe(current);
      });

      it('another book\'s ETag, or a made-up one → 200 with the book', async () => {
        const { book, etag } = await created('Mine');
        const other = await created('Other');
        for (const condition of [other.etag, '"made-up"']) {
          const response = await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': condition } });
          expectEnvelope(response, 200, 'Book retrieved successfully', book);
          expect(strongEtagOf(response)).toBe(etag);
        }
      });

      it('a missing book → 404 "Book not found" whatever the condition (its old ETag, `*`)', async () => {
        const { book, etag } = await deletedBook();
        for (const condition of [etag, '*', `W/${etag}`]) {
          expectEnvelope(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': condition } }), 404, 'Book not found', null);
        }
      });
    });

    describe('If-Match on PUT /book/:id', () => {
      it('a stale ETag → 412 "Precondition failed: the book has changed", the book and its ETag unchanged', async () => {
        const { book, etag: stale } = await created();
        const current = await changeBehindTheClientsBack(book, { title: 'Changed by someone else' });
        const response = await send('PUT', `/book/${book.id}`, { body: { title: 'Lost update' }, headers: { 'if-match': stale } });
        expectAnswer(response, PRECONDITION_FAILED);
        expect(await expectStored({ ...book, title: 'Changed by someone else' })).toBe(current);
      });

      it('the current ETag → 200 with the update, a new ETag, which GET answers', async () => {
        const { book, etag } = await created();
        const response = await send('PUT', `/book/${book.id}`, { body: { year: 1970 }, headers: { 'if-match': etag } });
        expectEnvelope(response, 200, 'Book updated successfully', { ...book, year: 1970 });
        const next = strongEtagOf(response);
        expect(next).not.toBe(etag);
        expect(await expectStored({ ...book, year: 1970 })).toBe(next);
        // The ETag it answered is the one to send next.
        const again = await send('PUT', `/book/${book.id}`, { body: { year: 1971 }, headers: { 'if-match': next } });
        expectEnvelope(again, 200, 'Book updated successfully', { ...book, year: 1971 });
      });

      it('a list holding the current ETag among others → 200, applied', async () => {
        const { book, etag } = await created();
        const response = await send('PUT', `/book/${book.id}`, { body: { title: 'Listed' }, headers: { 'if-match': `"nope", ${etag}` } });
        expectEnvelope(response, 200, 'Book updated successfully', { ...book, title: 'Listed' });
        await expectStored({ ...book, title: 'Listed' });
      });

      it('`*` → 200, applied, a new ETag', async () => {
        const { book, etag } = await created();
        const response = await send('PUT', `/book/${book.id}`, { body: { author: 'Anyone' }, headers: { 'if-match': '*' } });
        expectEnvelope(response, 200, 'Book updated successfully', { ...book, author: 'Anyone' });
        expect(strongEtagOf(response)).not.toBe(etag);
        await expectStored({ ...book, author: 'Anyone' });
      });

      it('W/ + the current ETag → 412 (If-Match compares strongly), unchanged', async () => {
        const { book, etag } = await created();
        expectAnswer(await send('PUT', `/book/${book.id}`, { body: { title: 'Weak' }, headers: { 'if-match': `W/${etag}` } }), PRECONDITION_FAILED);
        expect(await expectStored(book)).toBe(etag);
      });

      it('another book\'s current ETag → 412, unchanged', async () => {
        const { book, etag } = await created('Target');
        const other = await created('Other');
        expectAnswer(await send('PUT', `/book/${book.id}`, { body: { title: 'Wrong book' }, headers: { 'if-match': other.etag } }), PRECONDITION_FAILED);
        expect(await expectStored(book)).toBe(etag);
      });

      it('404 before 412: a missing book with its old ETag or `*` → 404 "Book not found"', async () => {
        const { book, etag } = await deletedBook();
        for (const condition of [etag, '*']) {
          expectEnvelope(await send('PUT', `/book/${book.id}`, { body: { title: 'Ghost' }, headers: { 'if-match': condition } }), 404, 'Book not found', null);
        }
      });

      it('400 before 412: an invalid body with a stale ETag → 400 "Invalid input", unchanged', async () => {
        const { book, etag: stale } = await created();
        const current = await changeBehindTheClientsBack(book, { year: 2000 });
        for (const body of [{ year: 'not a year' }, { title: '' }, '{"title":']) {
          const headers = { 'if-match': stale, ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}) };
          expectEnvelope(await send('PUT', `/book/${book.id}`, { body, headers }), 400, 'Invalid input', null);
        }
        expect(await expectStored({ ...book, year: 2000 })).toBe(current);
      });

      it('401 before everything: no token with a stale ETag → 401; a valid one with it → 412', async () => {
        const { book, etag: stale } = await created();
        await changeBehindTheClientsBack(book, { year: 2001 });
        const headers = { 'if-match': stale };
        expectEnvelope(await send('PUT', `/book/${book.id}`, { body: { title: 'x' }, headers, auth: null }), 401, 'Authorization token required', null);
        expectAnswer(await send('PUT', `/book/${book.id}`, { body: { title: 'x' }, headers }), PRECONDITION_FAILED);
      });
    });

    describe('If-Match on DELETE /book/:id', () => {
      it('a stale ETag → 412, the book still there', async () => {
        const { book, etag: stale } = await created();
        await changeBehindTheClientsBack(book, { title: 'Still here' });
        expectAnswer(await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': stale } }), PRECONDITION_FAILED);
        await expectStored({ ...book, title: 'Still here' });
      });

      it('W/ + the current ETag → 412, the book still there', async () => {
        const { book, etag } = await created();
        expectAnswer(await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': `W/${etag}` } }), PRECONDITION_FAILED);
        await expectStored(book);
      });

      it('the current ETag → 200 "Book deleted successfully", gone', async () => {
        const { book, etag } = await created();
        const response = await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': etag } });
        expectEnvelope(response, 200, 'Book deleted successfully', null);
        expect(headerOf(response, 'etag')).toBeUndefined();
        expectEnvelope(await send('GET', `/book/${book.id}`), 404, 'Book not found', null);
      });

      it('`*` → 200, gone', async () => {
        const { book } = await created();
        expectEnvelope(await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': '*' } }), 200, 'Book deleted successfully', null);
        expectEnvelope(await send('GET', `/book/${book.id}`), 404, 'Book not found', null);
      });

      it('a missing book with its old ETag or `*` → 404 "Book not found"', async () => {
        const { book, etag } = await deletedBook();
        for (const condition of [etag, '*']) {
          expectEnvelope(await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': condition } }), 404, 'Book not found', null);
        }
      });
    });

    describe('a malformed condition → 400, nothing compared, read or written', () => {
      /** Values that are neither `*` nor a list of quoted entity tags; `unquoted` is the book's own ETag without its quotes. */
      const malformed = (unquoted: string) => [unquoted, `W/${unquoted}`, '"a" "b"', '"a",, x', '"unterminated', ' ', `*, "${unquoted}"`];

      it('If-Match on PUT: 400 "Invalid If-Match header", the book unchanged (also with a key, and for a missing book)', async () => {
        const { book, etag } = await created();
        for (const condition of malformed(etag.slice(1, -1))) {
          const response = await send('PUT', `/book/${book.id}`, { body: { title: 'Never written' }, headers: { 'if-match': condition } });
          expectEnvelope(response, 400, 'Invalid If-Match header', null);
          const keyed = await send('PUT', `/book/${book.id}`, { body: { title: 'Never written' }, headers: { 'if-match': condition, 'idempotency-key': `malformed-${book.id}` } });
          expectEnvelope(keyed, 400, 'Invalid If-Match header', null);
        }
        expect(await expectStored(book)).toBe(etag);
        // The key was not used up: the same key with a good condition writes.
        const written = await send('PUT', `/book/${book.id}`, { body: { title: 'Written' }, headers: { 'if-match': etag, 'idempotency-key': `malformed-${book.id}` } });
        expect(written.status, written.text).toBe(200);
        const gone = await deletedBook();
        expectEnvelope(await send('PUT', `/book/${gone.book.id}`, { body: { title: 'x' }, headers: { 'if-match': '1-1' } }), 400, 'Invalid If-Match header', null);
      });

      it('If-Match on DELETE: 400 "Invalid If-Match header", the book still there', async () => {
        const { book, etag } = await created();
        for (const condition of malformed(etag.slice(1, -1))) {
          expectEnvelope(await send('DELETE', `/book/${book.id}`, { headers: { 'if-match': condition } }), 400, 'Invalid If-Match header', null);
        }
        expect(await expectStored(book)).toBe(etag);
      });

      it('If-None-Match on GET: 400 "Invalid If-None-Match header" (not a 200 that ignores it)', async () => {
        const { book, etag } = await created();
        for (const condition of malformed(etag.slice(1, -1))) {
          expectEnvelope(await send('GET', `/book/${book.id}`, { headers: { 'if-none-match': condition } }), 400, 'Invalid If-None-Match header', null);
        }
      });

      it('401 comes first: no token with a malformed condition → 401', async () => {
        const { book, etag } = await created();
        const response = await send('PUT', `/book/${book.id}`, { body: { title: 'x' }, headers: { 'if-match': etag.slice(1, -1) }, auth: null });
        expectEnvelope(response, 401, 'Authorization token required', null);
      });
    });

    it('without any of these headers, every answer is as before (same envelopes), with the ETag beside it', async () => {
      const { book } = await created();
      // Several unconditional writes in a row: no If-Match means no check, whatever the ETag now is.
      let expected: Book = book;
      for (const changes of [{ title: 'One' }, { author: 'Two' }, { year: 3 }]) {
        expected = { ...expected, ...changes };
        const response = await send('PUT', `/book/${book.id}`, { body: changes });
        expect(JSON.parse(response.text)).toEqual({ status: 200, message: 'Book updated successfully', data: expected });
        strongEtagOf(response);
      }
      const read = await send('GET', `/book/${book.id}`);
      expect(JSON.parse(read.text)).toEqual({ status: 200, message: 'Book retrieved successfully', data: expected });
      strongEtagOf(read);
      expect(JSON.parse((await send('DELETE', `/book/${book.id}`)).text)).toEqual({ status: 200, message: 'Book deleted successfully', data: null });
    });

    it(`two PUTs at once with the same If-Match (${RACE_ROUNDS} rounds): exactly one 200 and one 412; the book holds the winner's values and ETag`, async () => {
      const problems: string[] = [];
      for (let round = 0; round < RACE_ROUNDS; round++) {
        const { book, etag } = await created(`Race ${round}`);
        const writes = [
          { title: `Race ${round} by A`, author: 'A', year: 1001 },
          { title: `Race ${round} by B`, author: 'B', year: 1002 },
        ];
        const answers = await Promise.all(writes.map((body) => send('PUT', `/book/${book.id}`, { body, headers: { 'if-match': etag } })));
        const statuses = answers.map((answer) => answer.status);
        const winner = statuses.indexOf(200);
        if ([...statuses].sort().join(',') !== '200,412' || winner < 0) {
          problems.push(`round ${round}: ${answers.map(describeAnswer).join(' | ')}`);
          continue;
        }
        expectEnvelope(answers[winner]!, 200, 'Book updated successfully', { id: book.id, ...writes[winner]! });
        expectAnswer(answers[1 - winner]!, PRECONDITION_FAILED);
        expect(await expectStored({ id: book.id, ...writes[winner]! }), `round ${round}: the stored ETag is the winner's`).toBe(strongEtagOf(answers[winner]!));
      }
      expect(problems).toEqual([]);
    }, 60_000);
  });
});
