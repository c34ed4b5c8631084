// COPY's text format turned into the list's JSON (json-books.ts), for the speed path bulk-lists
// on PostgreSQL (postgres.ts). PostgreSQL sends `id<TAB>title<TAB>author<TAB>year<LF>` per book,
// with a backslash before each backslash and as \b \f \n \r \t \v for those control characters
// (COPY TO writes no other escape; the columns are NOT NULL, so no \N).
import { FIELD_OPENINGS, JsonBooks, MOST_BYTES_PER_BYTE, NEEDS_ESCAPE, writeBytes, writeEscaped } from './json-books.js';

/** What each input byte asks for. */
const COPY = 0;
const NEXT_FIELD = 1;
const END_OF_ROW = 2;
const COPY_ESCAPE = 3;
const JSON_ESCAPE = 4;

const BYTE_CLASS = new Uint8Array(256);
for (let byte = 0; byte < 256; byte += 1) if (NEEDS_ESCAPE[byte]) BYTE_CLASS[byte] = JSON_ESCAPE;
BYTE_CLASS[0x09] = NEXT_FIELD;
BYTE_CLASS[0x0a] = END_OF_ROW;
BYTE_CLASS[0x5c] = COPY_ESCAPE;

/** The character each COPY escape `\<letter>` stands for. */
const UNESCAPED = new Map<number, number>([
  [0x5c, 0x5c], // \\
  [0x62, 0x08], // \b
  [0x66, 0x0c], // \f
  [0x6e, 0x0a], // \n
  [0x72, 0x0d], // \r
  [0x74, 0x09], // \t
  [0x76, 0x0b], // \v
]);

/** The character COPY's escape `\<byte>` stands for, written as JSON writes it, at `at`; the offset after it. */
function writeCopyEscape(out: Buffer, at: number, byte: number): number {
  const character = UNESCAPED.get(byte);
  if (character === undefined) throw new Error(`COPY text: unexpected escape \\${String.fromCharCode(byte)}`);
  return writeEscaped(out, at, character);
}

/**
 * Converts one COPY's output as it arrives (`write` each piece, in order), and hands out the
 * books completed so far (`collect`): a row cut between two pieces waits for the rest.
 */
export class CopyTextToJson extends JsonBooks {
  private field = 0;
  private escaped = false;
  /** Where the id of the row being read is in `out`. */
  private idStart = 0;
  private idEnd = 0;

  constructor(pieceBytes: number) {
    super(pieceBytes);
    this.written = this.openBook(0);
  }

  /** Converts `chunk`'s bytes from `start` to `end` (the next bytes of the COPY's rows). */
  write(chunk: Uint8Array, start = 0, end = chunk.length): void {
    this.reserve((end - start + 1) * MOST_BYTES_PER_BYTE);
    // The state in locals while the loop runs (V8 keeps them in registers), stored after it.
    const out = this.out;
    let o = this.written;
    let field = this.field;
    let i = start;
    if (this.escaped && i < end) {
      // The last piece ended with a backslash: this one starts with what it escapes.
      o = writeCopyEscape(out, o, chunk[i]!);
      this.escaped = false;
      i += 1;
    }
    for (; i < end; i += 1) {
      const byte = chunk[i]!;
      const kind = BYTE_CLASS[byte];
      if (kind === COPY) {
        out[o++] = byte;
        continue;
      }
      switch (kind) {
        case NEXT_FIELD:
          if (field === 0) this.idEnd = o;
          field += 1;
          if (field > 3) throw new Error('COPY text: more than four columns');
          o = writeBytes(out, o, FIELD_OPENINGS[field]!);
          break;
        case END_OF_ROW:
          if (field !== 3) throw new Error('COPY text: a row without four columns');
          out[o++] = 0x7d; // }
          this.endBook(o, this.idStart, this.idEnd);
          o = this.openBook(o);
          field = 0;
          break;
        case COPY_ESCAPE:
          if (i + 1 < end) o = writeCopyEscape(out, o, chunk[++i]!);
          else this.escaped = true;
          break;
        default: // JSON_ESCAPE: a quote or a control character COPY sent as it is
          o = writeEscaped(out, o, byte);
      }
    }
    this.written = o;
    this.field = field;
  }

  /** Whether the input ended between rows (a COPY that finished sends only whole rows). */
  get atRowBoundary(): boolean {
    return !this.escaped && this.field === 0 && this.bytesAfterBooks === FIELD_OPENINGS[0]!.length;
  }

  protected override moved(by: number): void {
    this.idStart -= by;
    this.idEnd -= by;
  }

  /** Writes the next book's opening at `at` (before its first byte arrives); the offset after it. */
  private openBook(at: number): number {
    this.field = 0;
    const o = writeBytes(this.out, at, FIELD_OPENINGS[0]!);
    this.idStart = o;
    return o;
  }
}
