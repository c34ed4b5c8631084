// MySQL's text result rows turned into the list's JSON (json-books.ts), for the speed path
// bulk-lists on MySQL and MariaDB (mysql.ts). Each row is one packet: per column a
// length-encoded string (one length byte below 251; 0xfc: two more, 0xfd: three more; 0xfb is
// NULL, which these NOT NULL columns never are) holding the value as text, without escapes:
// the id's and year's digits, the title's and author's UTF-8 (the connection's utf8mb4).
import { FIELD_OPENINGS, JsonBooks, MOST_BYTES_PER_BYTE, NEEDS_ESCAPE, writeBytes, writeEscaped } from './json-books.js';

const TWO_BYTE_LENGTH = 0xfc;
const THREE_BYTE_LENGTH = 0xfd;

export class MysqlRowsToJson extends JsonBooks {
  /** Where the next column starts in the packet (moved past each value by nextValue). */
  private at = 0;

  /** Converts one row's payload, `packet` from `start` to `end`: id, title, author, year. */
  writeRow(packet: Buffer, start: number, end: number): void {
    this.reserve((end - start + 1) * MOST_BYTES_PER_BYTE + FIELD_OPENINGS[0]!.length + 1);
    const out = this.out;
    this.at = start;
    let o = writeBytes(out, this.written, FIELD_OPENINGS[0]!);
    const idStart = o;
    let length = this.nextValue(packet, end);
    o = copyDigits(packet, this.at - length, length, out, o);
    const idEnd = o;
    o = writeBytes(out, o, FIELD_OPENINGS[1]!);
    length = this.nextValue(packet, end);
    o = copyText(packet, this.at - length, length, out, o);
    o = writeBytes(out, o, FIELD_OPENINGS[2]!);
    length = this.nextValue(packet, end);
    o = copyText(packet, this.at - length, length, out, o);
    o = writeBytes(out, o, FIELD_OPENINGS[3]!);
    length = this.nextValue(packet, end);
    o = copyDigits(packet, this.at - length, length, out, o);
    out[o++] = 0x7d; // }
    this.written = o;
    this.endBook(o, idStart, idEnd);
  }

  /** The length of the value of the column at `at`, which then points past it (the value is the `length` bytes before `at`). */
  private nextValue(packet: Buffer, end: number): number {
    let p = this.at;
    let length = packet[p++]!;
    if (length === TWO_BYTE_LENGTH) {
      length = packet[p]! | (packet[p + 1]! << 8);
      p += 2;
    } else if (length === THREE_BYTE_LENGTH) {
      length = packet[p]! | (packet[p + 1]! << 8) | (packet[p + 2]! << 16);
      p += 3;
    } else if (length > 250) {
      throw new Error('MySQL row: a column is NULL or longer than the books table allows');
    }
    if (p + length > end) throw new Error('MySQL row: shorter than its columns say');
    this.at = p + length;
    return length;
  }
}

/** A number's digits (the id, the year), as they are. */
function copyDigits(packet: Buffer, from: number, length: number, out: Buffer, at: number): number {
  let o = at;
  for (let p = from, stop = from + length; p < stop; p += 1) out[o++] = packet[p]!;
  return o;
}

/** A text's UTF-8, escaped as JSON. */
function copyText(packet: Buffer, from: number, length: number, out: Buffer, at: number): number {
  let o = at;
  for (let p = from, stop = from + length; p < stop; p += 1) {
    const byte = packet[p]!;
    if (NEEDS_ESCAPE[byte] === 0) out[o++] = byte;
    else o = writeEscaped(out, o, byte);
  }
  return o;
}
