// `:id` → bigint. Anything that is not a positive decimal integer within the 64-bit id
// range is simply not a book (404), never a 4xx of another kind or a 5xx.
import { MAX_BOOK_ID } from './book.js';

const DECIMAL_ID = /^0*([1-9][0-9]{0,18})$/;

export function parseBookId(raw: string | undefined): bigint | undefined {
  if (raw === undefined) return undefined;
  const digits = DECIMAL_ID.exec(raw)?.[1];
  if (digits === undefined) return undefined;
  const id = BigInt(digits);
  return id <= MAX_BOOK_ID ? id : undefined;
}
