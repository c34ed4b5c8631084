// The page checks a book before sending it (web/src/books.ts). Its rules must be the service's
// own (docs/api.md "Validation"): for each case, the page lets it through exactly when the
// service stores it, so the person is never told "fine" by the page and "Invalid input" after.
import { describe, expect, it } from 'vitest';
import { readFields } from '../../web/src/books.js';
import { useService } from '../helpers/service/start-service.js';

const TEXTS: Array<[string, string]> = [
  ['one character', 'a'],
  ['500 characters', 'x'.repeat(500)],
  ['501 characters', 'x'.repeat(501)],
  ['500 emoji (500 code points, 1000 UTF-16 units)', '😀'.repeat(500)],
  ['501 emoji', '😀'.repeat(501)],
  ['empty', ''],
  ['only white space', ' \t\n'],
  ['surrounded by spaces', '  Dune  '],
  ['a NUL', 'a\u0000b'],
  ['a lone high surrogate', 'a\uD800b'],
  ['a lone low surrogate', '\uDC00'],
  ['markup', '<img src=x onerror=alert(1)>'],
];
const YEARS: Array<[string, string]> = [
  ['-9999', '-9999'],
  ['9999', '9999'],
  ['0', '0'],
  ['10000', '10000'],
  ['-10000', '-10000'],
  ['with spaces', ' 1965 '],
];

describe("the page's checks are the service's", () => {
  const service = useService('sqlite');

  it.each(TEXTS)('title and author: %s', async (_name, text) => {
    const token = await service.client.token();
    for (const field of ['title', 'author'] as const) {
      const values = { title: 'T', author: 'A', year: '2000', [field]: text };
      const { fields, errors } = readFields(values);
      const answer = await service.client.request('POST', '/book', { token, body: fields });
      expect(errors[field] === undefined, `${field}: page ${JSON.stringify(errors)}, service ${answer.status}`).toBe(answer.status === 201);
    }
  });

  it.each(YEARS)('year: %s', async (_name, year) => {
    const token = await service.client.token();
    const { fields, errors } = readFields({ title: 'T', author: 'A', year });
    const answer = await service.client.request('POST', '/book', { token, body: fields });
    expect(errors.year === undefined, `page ${JSON.stringify(errors)}, service ${answer.status}`).toBe(answer.status === 201);
  });

  it('years that are not whole numbers are refused by the page before sending', () => {
    for (const year of ['', '1.5', '1e3', '+1', 'MCMLXV', '19 65', '0x10']) expect(readFields({ title: 'T', author: 'A', year }).errors.year, year).toBeDefined();
  });
});
