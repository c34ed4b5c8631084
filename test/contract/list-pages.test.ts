// GET /books's parameters (docs/api.md "GET /books": limit, cursor, sort, q): every page walked
// through its Link headers, in every order; the search against a brute-force filter written
// here, independently of the service's code; a walk while books are added and deleted; every
// bad value. On every store (and Galera): each answers with its own indexes.
import { beforeAll, describe, expect, it } from 'vitest';
import type { BookFields } from '../../src/books/book.js';
import type { ApiResponse } from '../helpers/client/api-client.js';
import type { Book } from '../helpers/client/books.js';
import { expectEnvelope } from '../helpers/client/envelope.js';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import { execInTestStore } from '../helpers/stores/test-store.js';

const OK = 'Books retrieved successfully';
const SORTS = ['id', 'title', 'author', 'year', '-id', '-title', '-author', '-year'] as const;

// ---- the brute force: what the docs promise, written without the service's code ----

/** Code-point order (the data below is all in the BMP, where UTF-16 order is the same). */
function compareKeys(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedAs(books: Book[], sort: string): Book[] {
  const descending = sort.startsWith('-');
  const field = (descending ? sort.slice(1) : sort) as keyof Book;
  const sign = descending ? -1 : 1;
  return [...books].sort((a, b) => sign * (compareKeys(a[field], b[field]) || a.id - b.id));
}

const wordsOf = (text: string) => text.toLowerCase().split(/[^\p{L}\p{N}]+/u).filter(Boolean);

/** Each term of `q` starts a word of the title or the author. */
function matching(books: Book[], q: string): Book[] {
  const terms = wordsOf(q);
  return books.filter((book) => {
    const words = [...wordsOf(book.title), ...wordsOf(book.author)];
    return terms.every((term) => words.some((word) => word.startsWith(term)));
  });
}

// ---- the collection: words that share prefixes, cases, accents, punctuation, ties ----

const TITLE_WORDS = ['The', 'Hobbit', 'hobby', 'Lord', 'of', 'the', 'Rings', 'Émile', 'éducation', 'War', 'and', 'Peace', 'x-men', 'Zebra', 'apple', 'Apple', 'ab', 'a', 'Data', 'database', '1984', '42nd', 'naïve', 'Ångström', 'über', 'Straße', 'for', 'with', 'about', 'un', 'Δέλτα'];
const AUTHORS = ['J.R.R. Tolkien', 'Jean-Jacques Rousseau', "Flann O'Brien", 'Leo Tolstoy', 'George Orwell', 'Ann Leckie', 'ann leckie', 'Zoë Zimmer', 'Anonymous', 'Ab Ab'];

/** A seeded generator (mulberry32): the same collection on every run. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function collection(count: number, seed: number): BookFields[] {
  const next = random(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  return Array.from({ length: count }, () => {
    const words = Array.from({ length: 1 + Math.floor(next() * 4) }, () => pick(TITLE_WORDS));
    // Few distinct years and repeated titles and authors: many ties, broken by id.
    return { title: words.join(pick([' ', ' ', ', ', ': '])), author: pick(AUTHORS), year: pick([-500, 1001, 1937, 1949, 1965, 2020]) };
  });
}

const SEARCHES = [
  'tolk hob', 'TOLKIEN', 'hob', 'Hobbit', 'brien', "o'brien", 'j.r.r.', 'r', 'a', 'ab', 'ab ab', 'the', 'the rings', 'émile', 'ÉDU', 'edu',
  'x', 'men', 'x-men', '42', '42nd', 'nd', '19', 'naïve', 'ångström', 'über', 'straße', 'δέλ', 'for', 'with', 'abo', 'un', 'leckie ann',
  'zz', 'hobbit zebra apple', '!!!', '  data  ', 'hobb', 'datab', 'tolkien hobb', 'rousseau',
];

forEachStore((kind) => {
  describe('GET /books with limit, cursor, sort and q', () => {
    const service = useService(kind);
    let token: string;
    let books: Book[] = [];

    beforeAll(async () => {
      token = await service.client.token();
      for (const fields of collection(120, 7)) books.push(await service.client.createBook(token, fields));
    });

    const list = (query: string): Promise<ApiResponse> => service.client.request('GET', `/books${query}`, { token });

    /** The link of rel="next", if any. */
    function nextLink(response: ApiResponse): string | undefined {
      const link = response.headers.get('link');
      if (link === null) return undefined;
      const match = /^<(\/books\?[^>]+)>; rel="next"$/.exec(link);
      expect(match, link).not.toBeNull();
      return match![1];
    }

    /** Every page from `first` on, following the Link headers: the books in the order received. */
    async function walk(first: string, { between }: { between?: (page: number) => Promise<void> } = {}): Promise<{ books: Book[]; pages: ApiResponse[] }> {
      const seen: Book[] = [];
      const pages: ApiResponse[] = [];
      let url: string | undefined = first;
      while (url !== undefined) {
        const response = await list(url.replace(/^\/books/, ''));
        expect(response.status, `${url}: ${response.text}`).toBe(200);
        expectEnvelope(response, 200, OK, response.body.data);
        pages.push(response);
        seen.push(...(response.body.data as Book[]));
        url = nextLink(response);
        if (between) await between(pages.length);
        expect(pages.length).toBeLessThan(500);
      }
      return { books: seen, pages };
    }

    it.each(SORTS)('sort=%s: the pages, walked through Link, are the whole collection in that order, each book once', async (sort) => {
      const expected = sortedAs(books, sort);
      for (const limit of [7, 50, 1000]) {
        const { books: seen, pages } = await walk(`/books?limit=${limit}&sort=${sort}`);
        expect(seen).toEqual(expected);
        expect(pages.length).toBe(Math.max(1, Math.ceil(expected.length / limit)));
        for (const page of pages.slice(0, -1)) expect((page.body.data as Book[]).length).toBe(limit);
        expect(pages.at(-1)!.headers.get('link')).toBeNull();
      }
      // Without limit: all of them, in that order, in one answer, no link.
      const whole = await list(`?sort=${sort}`);
      expectEnvelope(whole, 200, OK, expected);
      expect(whole.headers.get('link')).toBeNull();
    });

    it('the first page says how many books match (X-Total-Count); the pages after it do not', async () => {
      const { pages } = await walk('/books?limit=40&sort=-year');
      expect(pages.length).toBe(3);
      expect(pages[0]!.headers.get('x-total-count')).toBe(String(books.length));
      for (const page of pages.slice(1)) {
        expect(page.headers.get('x-total-count')).toBeNull();
        expect(page.headers.get('x-total-count-estimate')).toBeNull();
      }
      const searched = await list('?limit=5&q=hob');
      expect(searched.headers.get('x-total-count')).toBe(String(matching(books, 'hob').length));
    });

    it.each(SEARCHES)('q=%j finds exactly the books whose words start with each term, in any sort, over every page', async (q) => {
      const expected = matching(books, q);
      const encoded = encodeURIComponent(q);
      expectEnvelope(await list(`?q=${encoded}`), 200, OK, sortedAs(expected, 'id'));
      const { books: seen, pages } = await walk(`/books?limit=9&sort=-title&q=${encoded}`);
      expect(seen).toEqual(sortedAs(expected, '-title'));
      expect(pages[0]!.headers.get('x-total-count')).toBe(String(expected.length));
    });

    it('the brute force is not vacuous: the searches above find some books and miss others', () => {
      const counts = SEARCHES.map((q) => matching(books, q).length);
      expect(counts.filter((count) => count > 0 && count < books.length).length).toBeGreaterThan(20);
      expect(matching(books, 'tolk hob').every((book) => book.author === 'J.R.R. Tolkien')).toBe(true);
      expect(matching(books, 'nd')).toEqual([]);
    });

    it('a walk while books are added and deleted: each book present throughout is seen exactly once, and none twice', async () => {
      const before = (await walk('/books?limit=1000')).books;
      const added: Book[] = [];
      const deleted = new Set<number>();
      const next = random(99);
      const { books: seen } = await walk('/books?limit=6&sort=title', {
        async between(page) {
          // New books land before, at and after the walk's position; old ones go from both sides.
          for (const fields of collection(3, 1000 + page)) added.push(await service.client.createBook(token, fields));
          const candidates = before.filter((book) => !deleted.has(book.id));
          for (let i = 0; i < 2 && candidates.length > 0; i++) {
            const victim = candidates.splice(Math.floor(next() * candidates.length), 1)[0]!;
            expect((await service.client.request('DELETE', `/book/${victim.id}`, { token })).status).toBe(200);
            deleted.add(victim.id);
          }
        },
      });
      const seenIds = seen.map((book) => book.id);
      expect(new Set(seenIds).size).toBe(seenIds.length);
      const throughout = before.filter((book) => !deleted.has(book.id));
      for (const book of throughout) expect(seenIds.filter((id) => id === book.id), `book ${book.id}`).toHaveLength(1);
      expect(deleted.size).toBeGreaterThan(10);
      // What the walk saw is in the order asked for.
      expect(seen).toEqual(sortedAs(seen, 'title'));
      books = [...throughout, ...added];
      expectEnvelope(await list('?sort=id'), 200, OK, sortedAs(books, 'id'));
    });

    it.each([
      ['?limit=0', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=1001', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=-1', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=1.5', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=abc', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=%201', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=1e2', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=99999999999999999999', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?limit=1&limit=2', 'Invalid limit: expected an integer from 1 to 1000'],
      ['?sort=price', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=Title', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=--year', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=%2Byear', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=title;drop%20table%20books', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      ['?sort=id&sort=title', 'Invalid sort: expected id, title, author or year, optionally prefixed by -'],
      [`?q=${'a'.repeat(201)}`, 'Invalid q: at most 200 characters and 10 terms'],
      [`?q=${encodeURIComponent('a b c d e f g h i j k')}`, 'Invalid q: at most 200 characters and 10 terms'],
      ['?q=a&q=b', 'Invalid q: at most 200 characters and 10 terms'],
      ['?cursor=', 'Invalid cursor: not issued by this service'],
      ['?cursor=abc', 'Invalid cursor: not issued by this service'],
      ['?cursor=a.b.c', 'Invalid cursor: not issued by this service'],
      ["?cursor=WyJpZCBfIiwiMSIsIjEiXQ.AAAAAAAAAAAAAAAAAAAAAA", 'Invalid cursor: not issued by this service'],
    ])('%s → 400 %j', async (query, message) => {
      expectEnvelope(await list(query), 400, message, null);
      expectEnvelope(await list(`${query}&limit=5`), 400, message, null);
    });

    it('a cursor issued for another sort or search → 400; one changed by a single character → 400; the same cursor with another limit works', async () => {
      const first = await list('?limit=3&sort=-year&q=the');
      const cursor = new URLSearchParams(nextLink(first)!.split('?')[1]).get('cursor')!;
      for (const other of ['&sort=year&q=the', '&sort=-title&q=the', '&sort=-year', '&sort=-year&q=them', '&q=the']) {
        expectEnvelope(await list(`?limit=3&cursor=${cursor}${other}`), 400, 'Invalid cursor: issued for another sort or search', null);
      }
      for (const position of [0, 10, cursor.length - 1]) {
        const changed = cursor.slice(0, position) + (cursor[position] === 'A' ? 'B' : 'A') + cursor.slice(position + 1);
        expectEnvelope(await list(`?limit=3&sort=-year&q=the&cursor=${changed}`), 400, 'Invalid cursor: not issued by this service', null);
      }
      // The search is the same when only punctuation and case differ.
      const again = await list(`?limit=50&sort=-year&q=${encodeURIComponent('  THE!')}&cursor=${cursor}`);
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual(sortedAs(matching(books, 'the'), '-year').slice(3, 53));
    });

    it('unknown parameters beside them are ignored; parameter names are case-sensitive', async () => {
      expectEnvelope(await list('?limit=5&offset=10&page=3&foo=bar'), 200, OK, sortedAs(books, 'id').slice(0, 5));
      expectEnvelope(await list('?LIMIT=5&Sort=x&Q=zzz'), 200, OK, sortedAs(books, 'id'));
    });

    it('without a token: 401 before any parameter is read', async () => {
      const response = await service.client.request('GET', '/books?limit=0&sort=x');
      expectEnvelope(response, 401, 'Authorization token required', null);
    });
  });

  describe('GET /books with sort or q past one store page (1,000 books): streamed in order', () => {
    const service = useService(kind);
    let token: string;
    beforeAll(async () => {
      token = await service.client.token();
      // 2,500 books in a few statements (the service's writes would take longer): the store's
      // indexes and search index are kept by the database, as for any write.
      const rows = collection(2_500, 3).map(({ title, author, year }, i) => `('${`${title} bulk${i % 7}`.replaceAll("'", "''")}', '${author.replaceAll("'", "''")}', ${year})`);
      for (let start = 0; start < rows.length; start += 500) {
        await execInTestStore(service.current.testStore, `insert into books (title, author, year) values ${rows.slice(start, start + 500).join(', ')}`);
      }
    });

    it('sort=-year without limit: every book, in order; q=bulk3: every match', async () => {
      const all = (await service.client.request('GET', '/books', { token })).body.data as Book[];
      expect(all).toHaveLength(2_500);
      const sorted = await service.client.request('GET', '/books?sort=-year', { token });
      expectEnvelope(sorted, 200, OK, sortedAs(all, '-year'));
      const searched = await service.client.request('GET', '/books?q=bulk3&sort=author', { token });
      expectEnvelope(searched, 200, OK, sortedAs(matching(all, 'bulk3'), 'author'));
      expect((searched.body.data as Book[]).length).toBeGreaterThan(300);
    });

    it('a search of more than 1,000 books: counted where the page reads every match anyway, otherwise X-Total-Count-Estimate near the count; of 1,000 or fewer: X-Total-Count', async () => {
      const all = (await service.client.request('GET', '/books', { token })).body.data as Book[];
      const many = await service.client.request('GET', '/books?limit=10&q=bulk', { token });
      expectEnvelope(many, 200, OK, sortedAs(all, 'id').slice(0, 10));
      // SQLite pages by id from FTS5 alone and counts the first 1,001 matches; PostgreSQL reads
      // a search its planner expects to be small, and InnoDB's FULLTEXT every search, whole.
      if (kind === 'sqlite') {
        expect(many.headers.get('x-total-count')).toBeNull();
        expect(Math.abs(Number(many.headers.get('x-total-count-estimate')) - 2_500)).toBeLessThanOrEqual(250);
      } else {
        expect(many.headers.get('x-total-count')).toBe('2500');
        expect(many.headers.get('x-total-count-estimate')).toBeNull();
      }
      const short = await service.client.request('GET', '/books?limit=10&q=b&sort=-id', { token });
      expectEnvelope(short, 200, OK, sortedAs(matching(all, 'b'), '-id').slice(0, 10));
      if (kind !== 'postgres') expect(short.headers.get('x-total-count')).toBeNull();
      if (kind !== 'postgres') expect(Math.abs(Number(short.headers.get('x-total-count-estimate')) - matching(all, 'b').length)).toBeLessThanOrEqual(250);
      const few = await service.client.request('GET', '/books?limit=10&q=bulk3&sort=-id', { token });
      expect(few.headers.get('x-total-count')).toBe(String(matching(all, 'bulk3').length));
      expect(few.headers.get('x-total-count-estimate')).toBeNull();
    });

    it('a search walked by id, up and down, through pages of up to 1,000: every match once, in order', async () => {
      const all = (await service.client.request('GET', '/books', { token })).body.data as Book[];
      for (const [sort, q] of [['id', 'bulk'], ['-id', 'bulk'], ['-id', 'bulk5 tolkien']] as const) {
        const expected = sortedAs(matching(all, q), sort);
        const seen: Book[] = [];
        let url: string | undefined = `/books?limit=${sort === 'id' ? 1000 : 333}&sort=${sort}&q=${encodeURIComponent(q)}`;
        while (url !== undefined) {
          const page = await service.client.request('GET', url, { token });
          expect(page.status, page.text).toBe(200);
          seen.push(...(page.body.data as Book[]));
          url = /^<([^>]+)>/.exec(page.headers.get('link') ?? '')?.[1];
        }
        expect(seen).toEqual(expected);
        expect(expected.length).toBeGreaterThan(10);
      }
    });
  });
});

// PostgreSQL's planner knows, from ANALYZE, how common a word is: a search it expects to match
// more than 20,000 books is left to its plan (walking an index in the page's order) and its
// estimate is the count.
forEachStore(
  (kind) => {
    describe('GET /books?q= where the planner expects more than 20,000 matches', () => {
      const service = useService(kind);
      let token: string;
      beforeAll(async () => {
        token = await service.client.token();
        const store = service.current.testStore;
        // Many distinct words beside the common ones, as in a real collection: ANALYZE keeps the
        // frequent words' frequencies (with few distinct words its estimate of a prefix is 2 %).
        await execInTestStore(
          store,
          `insert into books (title, author, year)
           select 'Common ' || substr(md5(n::text), 1, 6) || ' ' || (array['red', 'blue', 'green', 'gold', 'grey'])[1 + n % 5],
                  'Writer ' || substr(md5((n % 300)::text), 1, 5), 1900 + n % 100
           from generate_series(1, 30000) as n`,
        );
        await execInTestStore(store, `insert into books (title, author, year) values ('Rare tale', 'Writer 3', 2001)`);
        await execInTestStore(store, 'analyze books');
      });

      it('the pages are the first matches in order; the count is the planner\'s estimate, near the count', async () => {
        const every = (await service.client.request('GET', '/books', { token })).body.data as Book[];
        for (const [q, sort] of [['common gold', '-year'], ['common', 'id'], ['writer', 'title'], ['gre wri', '-id']]) {
          const page = await service.client.request('GET', `/books?limit=5&sort=${sort}&q=${encodeURIComponent(q!)}`, { token });
          expectEnvelope(page, 200, OK, sortedAs(matching(every, q!), sort!).slice(0, 5));
        }
        const all = await service.client.request('GET', '/books?limit=5&q=common', { token });
        expect(all.headers.get('x-total-count')).toBeNull();
        expect(Math.abs(Number(all.headers.get('x-total-count-estimate')) - 30_000)).toBeLessThanOrEqual(3_000);
        const rare = await service.client.request('GET', '/books?limit=5&q=rare', { token });
        expect(rare.headers.get('x-total-count')).toBe('1');
      });
    });
  },
  ['postgres'],
);
