// `COPY … TO STDOUT` on a pg connection, its rows handed over as the socket's own bytes: a pg
// Submittable (what client.query() accepts besides a query) that, while the COPY runs, reads
// the connection's socket itself and gives it back to pg for the messages after it.
//
// Why not pg-copy-streams, the library of the field, which works the same way: it makes a
// Buffer and a stream push per CopyData message, and PostgreSQL sends one message per row;
// measured at 1,000,000 books, that and its garbage were about 150 ms of the 450 ms the service
// spent on the list, where this costs a few nanoseconds a row (docs/benchmarks-changes.md, "The
// whole list by COPY and by MySQL's text rows").
//
// PostgreSQL's messages (protocol-message-formats): a code byte and a length (including itself);
// during COPY OUT: CopyOutResponse 'H', CopyData 'd' (a row), CopyDone 'c', and at any time
// NoticeResponse 'N', ParameterStatus 'S', NotificationResponse 'A'. After CopyDone come
// CommandComplete and ReadyForQuery, and an ErrorResponse 'E' may come instead of any of these:
// pg reads those itself and calls the handle* methods below.
import type { Duplex } from 'node:stream';
import type pg from 'pg';

const COPY_DATA = 0x64; // 'd'
const COPY_DONE = 0x63; // 'c'
/** What may come during COPY OUT and is read past (a notification is lost, as with pg-copy-streams). */
const SKIPPED = new Set([0x48 /* H */, 0x4e /* N */, 0x53 /* S */, 0x41 /* A */]);
const HEADER_BYTES = 5;

type OnData = (chunk: Buffer) => void;

/** Receives each row's bytes, in pieces when a row is cut between two reads of the socket. */
export type RowBytes = (chunk: Buffer, start: number, end: number) => void;

export class CopyOut implements pg.Submittable {
  /** Set by pg when the pool has a query_timeout: called once, when the COPY ends or fails. */
  callback: ((error: Error | null) => void) | undefined;
  /** Resolves when PostgreSQL said the COPY is complete; rejects with its error or pg's. */
  readonly done: Promise<void>;
  private settle!: (error: Error | null) => void;
  private stream: Duplex | undefined;
  private pgOnData: OnData | undefined;
  /** A message header cut between two reads: its bytes so far. */
  private readonly header = Buffer.alloc(HEADER_BYTES);
  private headerBytes = 0;
  private code = 0;
  private payloadLeft = 0;
  private error: Error | undefined;

  constructor(
    private readonly text: string,
    private readonly onRow: RowBytes,
  ) {
    this.done = new Promise<void>((resolve, reject) => {
      this.settle = (error) => {
        this.settle = () => undefined;
        const callback = this.callback;
        this.callback = undefined;
        if (error) reject(error);
        else resolve();
        callback?.(error);
      };
    });
  }

  /** Called by pg when the connection is free: takes over the socket's reads, sends the statement. */
  submit(connection: pg.Connection): void {
    const stream = connection.stream;
    const listeners = stream.listeners('data') as OnData[];
    if (listeners.length !== 1) throw new Error(`COPY: expected pg's one reader of the socket, found ${listeners.length}`);
    this.stream = stream;
    this.pgOnData = listeners[0];
    stream.removeListener('data', this.pgOnData!);
    stream.on('data', this.onData);
    connection.query(this.text);
  }

  private readonly onData = (chunk: Buffer): void => {
    try {
      this.read(chunk);
    } catch (error) {
      // The converter refused a row: the connection is left mid-COPY, so it is closed.
      this.error = error instanceof Error ? error : new Error(String(error));
      this.giveBack(Buffer.alloc(0));
      this.stream?.destroy(this.error);
    }
  };

  private read(chunk: Buffer): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.payloadLeft > 0) {
        const end = Math.min(chunk.length, i + this.payloadLeft);
        if (this.code === COPY_DATA) this.onRow(chunk, i, end);
        this.payloadLeft -= end - i;
        i = end;
        continue;
      }
      let code: number;
      let length: number;
      if (this.headerBytes === 0 && chunk.length - i >= HEADER_BYTES) {
        code = chunk[i]!;
        length = chunk.readUInt32BE(i + 1) - 4;
        if (!this.isOurs(code)) return this.giveBack(chunk.subarray(i));
        i += HEADER_BYTES;
      } else {
        // A header cut between two reads.
        if (this.headerBytes === 0 && !this.isOurs(chunk[i]!)) return this.giveBack(chunk.subarray(i));
        const n = Math.min(HEADER_BYTES - this.headerBytes, chunk.length - i);
        chunk.copy(this.header, this.headerBytes, i, i + n);
        this.headerBytes += n;
        i += n;
        if (this.headerBytes < HEADER_BYTES) return;
        this.headerBytes = 0;
        code = this.header[0]!;
        length = this.header.readUInt32BE(1) - 4;
      }
      if (code === COPY_DONE) return this.giveBack(chunk.subarray(i));
      this.code = code;
      this.payloadLeft = length;
    }
  }

  /** Whether a message with this code is read here (the rest, from an ErrorResponse on, is pg's). */
  private isOurs(code: number): boolean {
    return code === COPY_DATA || code === COPY_DONE || SKIPPED.has(code);
  }

  /** Hands the socket back to pg, with the bytes of the messages after the COPY's own. */
  private giveBack(rest: Buffer): void {
    const stream = this.stream!;
    stream.removeListener('data', this.onData);
    stream.on('data', this.pgOnData!);
    if (rest.length > 0) this.pgOnData!(rest);
  }

  // What pg calls while the statement is the connection's active query.

  handleError(error: Error): void {
    this.error ??= error;
    // A timeout or lost socket while the socket is still ours: nothing more will come.
    if (this.stream?.listeners('data').includes(this.onData)) this.giveBack(Buffer.alloc(0));
    this.settle(this.error);
  }

  handleReadyForQuery(): void {
    this.settle(this.error ?? null);
  }

  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(): void {}
  handleCopyData(): void {}
}
