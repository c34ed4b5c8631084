// The list's JSON written byte by byte from a database's wire bytes, for the speed path
// bulk-lists: what the PostgreSQL (postgres-copy-json.ts) and MySQL (mysql-text-rows.ts)
// readers share. Every book comes out as `,{"id":…,"title":"…","author":"…","year":…}`, the
// same bytes as bookJson() (src/books/book.ts) after a comma: the keys in BOOK_COLUMNS order,
// the id and year as the database wrote their digits, the texts with JSON.stringify's escapes
// (\" \\ \b \f \n \r \t, \u00XX for the other control characters) and their UTF-8 untouched,
// since the databases send UTF-8 too. No JavaScript string is made of the text.

/** What goes before each field: the book's opening, then the keys (in BOOK_COLUMNS order). */
export const FIELD_OPENINGS = [',{"id":', ',"title":"', '","author":"', '","year":'].map((text) => Buffer.from(text, 'latin1'));
/** The most bytes one input byte can become: a field's opening (an escape \u00XX is 6). */
export const MOST_BYTES_PER_BYTE = Math.max(...FIELD_OPENINGS.map((opening) => opening.length));

/** Per byte of text: 0 written as it is, 1 escaped. */
export const NEEDS_ESCAPE = new Uint8Array(256);
for (let byte = 0; byte < 0x20; byte += 1) NEEDS_ESCAPE[byte] = 1;
NEEDS_ESCAPE[0x22] = 1;
NEEDS_ESCAPE[0x5c] = 1;

/** JSON.stringify's short escapes; the other control characters are \u00XX. */
const SHORT_ESCAPES = new Map<number, number>([
  [0x22, 0x22], // "
  [0x5c, 0x5c], // \
  [0x08, 0x62], // b
  [0x0c, 0x66], // f
  [0x0a, 0x6e], // n
  [0x0d, 0x72], // r
  [0x09, 0x74], // t
]);
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** Writes a few bytes at `at`; the offset after them. A loop: Buffer.copy is a native call, far slower for 3 to 12 bytes. */
export function writeBytes(out: Buffer, at: number, bytes: Buffer): number {
  let o = at;
  for (let i = 0; i < bytes.length; i += 1) out[o++] = bytes[i]!;
  return o;
}

/** Writes a character of text that NEEDS_ESCAPE, as JSON.stringify escapes it, at `at`; the offset after it. */
export function writeEscaped(out: Buffer, at: number, byte: number): number {
  let o = at;
  out[o++] = 0x5c;
  const short = SHORT_ESCAPES.get(byte);
  if (short !== undefined) {
    out[o++] = short;
    return o;
  }
  out[o++] = 0x75; // u
  out[o++] = 0x30;
  out[o++] = 0x30;
  out[o++] = HEX[byte >> 4]!;
  out[o++] = HEX[byte & 15]!;
  return o;
}

/** Complete books, converted: each book's JSON after a comma, the last one's id and how many. */
export interface ConvertedBooks {
  bytes: Buffer;
  lastId: bigint;
  count: number;
}

/** One statement's books, in pieces. */
export interface Chunk {
  pieces: ConvertedBooks[];
  books: number;
}

/**
 * The Buffer the books are written to, and which of its bytes are complete books: a reader
 * writes at `written`, marks each book's end (endBook), and take() hands out the complete ones.
 */
export class JsonBooks {
  protected out: Buffer;
  /** Bytes written to `out`; the complete books end at `booksEnd`, the rest is a book still arriving. */
  protected written = 0;
  private booksEnd = 0;
  private books = 0;
  private lastIdStart = -1;
  private lastIdEnd = -1;

  /** The books converted so far, in pieces (collect). */
  readonly chunk: Chunk = { pieces: [], books: 0 };
  /** Bytes of each Buffer written to: a book is about a hundred bytes, so a piece is taken nearly full. */
  private readonly capacity: number;

  /** @param pieceBytes about how many bytes of JSON each piece holds. */
  constructor(private readonly pieceBytes: number) {
    this.capacity = pieceBytes + 16 * 1024;
    this.out = Buffer.allocUnsafe(this.capacity);
  }

  /** Moves the complete books into `chunk` once a piece's worth is written; with `finish`, whatever is complete. */
  collect(finish = false): void {
    if (!finish && this.written < this.pieceBytes) return;
    const books = this.take();
    if (books === undefined) return;
    this.chunk.pieces.push(books);
    this.chunk.books += books.count;
  }

  /**
   * The books completed since the last take (undefined: none), in the Buffer they were written
   * to (no copy: handed out, and a new one started); a book still arriving moves to the new one.
   */
  private take(): ConvertedBooks | undefined {
    if (this.books === 0) return undefined;
    const out = this.out;
    const taken = { bytes: out.subarray(0, this.booksEnd), lastId: BigInt(out.toString('latin1', this.lastIdStart, this.lastIdEnd)), count: this.books };
    const rest = this.written - this.booksEnd;
    this.out = Buffer.allocUnsafe(Math.max(this.capacity, rest * 2));
    out.copy(this.out, 0, this.booksEnd, this.written);
    this.moved(this.booksEnd);
    this.written = rest;
    this.booksEnd = 0;
    this.books = 0;
    return taken;
  }

  /** Room for `more` bytes at `written`. */
  protected reserve(more: number): void {
    if (this.written + more <= this.out.length) return;
    const larger = Buffer.allocUnsafe(Math.max(this.out.length * 2, this.written + more));
    this.out.copy(larger, 0, 0, this.written);
    this.out = larger;
  }

  /** A book ends at `end`; its id's digits are at `idStart`…`idEnd`. */
  protected endBook(end: number, idStart: number, idEnd: number): void {
    this.booksEnd = end;
    this.books += 1;
    this.lastIdStart = idStart;
    this.lastIdEnd = idEnd;
  }

  /** Offsets a reader keeps into `out` move back by `by` bytes (take moved the book still arriving). */
  protected moved(by: number): void {
    void by;
  }

  /** Bytes written after the last complete book (of a book still arriving). */
  protected get bytesAfterBooks(): number {
    return this.written - this.booksEnd;
  }
}

/** Runs `read` on a borrowed connection, then gives it back: as broken when the read failed, so the pool drops it. */
export async function readBorrowed<T>(giveBack: (failed: boolean) => void, read: () => Promise<T>): Promise<T> {
  let failed = false;
  try {
    return await read();
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    giveBack(failed);
  }
}
