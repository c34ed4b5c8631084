// Which page of the list the web page shows (web/src/list-state.ts): the URL fragment that keeps
// it, the request it makes, the next cursor read from a Link header, the count from the headers.
import { describe, expect, it } from 'vitest';
import { FIRST_PAGE, fromFragment, isListFragment, listPath, nextCursor, nextPage, pageNumber, previousPage, toFragment, totalFrom } from '../../web/src/list-state.js';

describe('the list state of the web page', () => {
  it('goes to the fragment and back: sort, filter, size, page and every cursor; the first page has no fragment', () => {
    expect(toFragment(FIRST_PAGE)).toBe('');
    const third = nextPage(nextPage({ ...FIRST_PAGE, column: 'year', descending: true, q: 'tolk hob', size: 20 }, 'a.b'), 'c/d+e=');
    expect(pageNumber(third)).toBe(3);
    const fragment = toFragment(third);
    expect(fragment).toBe('#sort=-year&q=tolk+hob&size=20&page=3&cursor=a.b&cursor=c%2Fd%2Be%3D');
    expect(fromFragment(fragment)).toEqual(third);
    expect(previousPage(third).cursors).toEqual(['a.b']);
    expect(previousPage(previousPage(third))).toEqual({ ...third, cursors: [] });
    expect(listPath(third)).toBe('/books?limit=20&sort=-year&q=tolk+hob&cursor=c%2Fd%2Be%3D');
    expect(listPath(FIRST_PAGE, 1)).toBe('/books?limit=1&sort=id');
  });

  it('reads an edited link safely: an unknown sort or size is the default; a page beyond its cursors counts the pages before them', () => {
    expect(fromFragment('#sort=price&size=7')).toEqual(FIRST_PAGE);
    const deep = fromFragment('#page=7&cursor=x');
    expect(pageNumber(deep)).toBe(7);
    expect(previousPage(deep)).toEqual(FIRST_PAGE);
    expect(fromFragment(`#q=${'a'.repeat(300)}`).q).toHaveLength(200);
    expect(isListFragment('#books-heading')).toBe(false);
    expect(isListFragment('')).toBe(true);
  });

  it('takes the next cursor from the Link header (RFC 8288), and the count or its estimate from the first page', () => {
    expect(nextCursor('</books?limit=50&sort=-year&q=tolk%20hob&cursor=XX.YY>; rel="next"')).toBe('XX.YY');
    expect(nextCursor('</books?cursor=a>; rel=prev, </books?limit=5&cursor=b%2Bc>; rel=next')).toBe('b+c');
    expect(nextCursor(null)).toBeUndefined();
    expect(nextCursor('</books?limit=5>; rel="next"')).toBeUndefined();
    expect(totalFrom('1234', null)).toEqual({ count: 1234, estimate: false });
    expect(totalFrom(null, '1000000')).toEqual({ count: 1_000_000, estimate: true });
    expect(totalFrom(null, null)).toBeUndefined();
  });
});
