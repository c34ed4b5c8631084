// The change feed of one process: the streams of GET /books/changes it serves, fed from the
// store's change log (src/store/change-log.ts), which is the only record: every instance reads
// it, so a change committed through any instance, worker or database node reaches every stream.
//
// One tail reader per process follows the log (every POLL_MS while a stream is open, and at
// once after a write through this process: a wake-up only shortens the wait, the log decides),
// keeps the last RECENT_EVENTS events as their SSE text, and hands each live stream the ones after
// its position. A stream that starts further back (a resumed cursor) first catches up from the
// log on its own, then joins. Memory per stream is bounded: once MAX_BUFFERED_BYTES wait for a
// client, nothing more is queued for it; when it has taken them it catches up from the log, and
// a client that takes nothing for STALLED_MS is dropped (it resumes with its last cursor). No
// reader holds up the others or the writers.
import type { Logger } from 'pino';
import { bookJson } from '../books/book.js';
import type { BookChange, BookStore, ChangeFeedState } from '../store/book-store.js';
import { describeDriverError } from '../store/errors.js';
import { NO_TRACING, type TraceContext, type Tracing } from '../tracing/tracing.js';
import { decodeChangeCursor, encodeChangeCursor } from './change-cursor.js';

export interface ChangeFeedSettings {
  /** How long changes are kept (CHANGES_RETENTION): an older cursor is answered 410. */
  retentionMs: number;
  /** Streams this process serves at once (CHANGES_MAX_STREAMS); one more is answered 503. */
  maxStreams: number;
}

/** Where a stream's events are written: the client's connection. */
export interface ChangeSink {
  write(bytes: Buffer): void;
  /** Bytes written but not yet taken by the client. */
  buffered(): number;
  /** Calls `taken` once the client has taken what waits for it. */
  onceTaken(taken: () => void): void;
  /** Ends the stream cleanly (shutdown, the token expired). */
  end(): void;
  /** Drops the connection (a client that stopped reading, a read of the log that failed). */
  cut(): void;
}

/** How often the tail reader looks for changes made through other instances, while a stream is open. */
export const POLL_MS = 200;
/** A comment line this often keeps idle streams open through proxies and load balancers. */
export const HEARTBEAT_MS = 15_000;
/** The comment line that keeps an idle stream open. */
const HEARTBEAT = Buffer.from(': heartbeat\n\n');
/** Events kept in memory for the live streams (older ones are read from the log). */
export const RECENT_EVENTS = 10_000;
/** Bytes waiting for a client beyond which nothing more is queued for it. */
export const MAX_BUFFERED_BYTES = 1024 * 1024;
/** A client with MAX_BUFFERED_BYTES waiting that takes nothing for this long is dropped. */
export const STALLED_MS = 10_000;
/** Changes read from the log per statement. */
const READ_BATCH = 1_000;

/** Whether a stream may start from a cursor, and from where. */
export type StreamStart =
  | { kind: 'start'; position: bigint; feedId: string }
  | { kind: 'not-issued' }
  | { kind: 'expired' }
  | { kind: 'full' };

interface Stream {
  sink: ChangeSink;
  /** The last position sent. */
  position: bigint;
  /** Fed by the tail reader (else catching up on its own, or waiting for its client). */
  live: boolean;
  /** Its client has MAX_BUFFERED_BYTES waiting: nothing more is queued until it takes them. */
  full: boolean;
  closed: boolean;
}

interface RecentEvent {
  position: bigint;
  text: string;
}

export class ChangeFeed {
  /** Events sent to streams, and streams dropped for not reading (for /metrics). */
  eventsSent = 0;
  streamsDropped = 0;
  private readonly streams = new Set<Stream>();
  private readonly recent: RecentEvent[] = [];
  /** `recent` holds every event after this position up to `head`; undefined before the first read. */
  private recentFrom: bigint | undefined;
  /** The last position the tail reader has read. */
  private head: bigint | undefined;
  private tailing = false;
  private tailAgain = false;
  private wakeScheduled = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly tailReaders: Array<() => void> = [];

  private readonly cursorAskers: Array<{ asker: TraceContext | undefined; resolve(cursor: string): void; reject(error: unknown): void }> = [];

  constructor(
    private readonly store: BookStore,
    private readonly settings: ChangeFeedSettings,
    private readonly logger: Logger,
    private readonly tracing: Tracing = NO_TRACING,
  ) {
    this.every(POLL_MS, () => {
      if (this.streams.size > 0) void this.tail();
    });
    this.every(HEARTBEAT_MS, () => {
      for (const stream of this.streams) stream.sink.write(HEARTBEAT);
    });
    this.every(Math.min(60_000, Math.max(1_000, Math.round(settings.retentionMs / 4))), () => void this.prune());
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams.size;
  }

  /**
   * The cursor of the feed as it stands: a list read after it holds every change up to it
   * (Changes-Cursor). The requests that ask in one turn of the event loop share one read, sent
   * after they all asked (so list requests that arrive together still reach the list together,
   * src/fast/shared-lists.ts); with tracing on, it shows in the trace of each of them.
   */
  cursor(): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.cursorAskers.length === 0) setImmediate(() => void this.readCursor());
      this.cursorAskers.push({ asker: this.tracing.current(), resolve, reject });
    });
  }

  private async readCursor(): Promise<void> {
    const askers = this.cursorAskers.splice(0);
    try {
      const { feedId, last } = await this.tracing.batchOf(askers.map(({ asker }) => asker)).all(() => this.store.changeFeedState());
      const cursor = encodeChangeCursor({ feedId, position: last });
      for (const { resolve } of askers) resolve(cursor);
    } catch (error) {
      for (const { reject } of askers) reject(error);
    }
  }

  /**
   * Where a stream asked for with `cursor` (none: from now on) starts, or why it cannot. Call
   * `follow` right after (no await between) for a stream that may start.
   */
  async start(cursor: string | undefined): Promise<StreamStart> {
    if (this.streams.size >= this.settings.maxStreams) return { kind: 'full' };
    const state = await this.store.changeFeedState();
    const decoded = cursor === undefined ? undefined : decodeChangeCursor(cursor);
    if (cursor !== undefined && (decoded === undefined || decoded.feedId !== state.feedId || decoded.position > state.last)) {
      return { kind: 'not-issued' };
    }
    if (decoded && decoded.position < state.prunedThrough) return { kind: 'expired' };
    if (this.streams.size >= this.settings.maxStreams) return { kind: 'full' };
    return { kind: 'start', position: decoded?.position ?? state.last, feedId: state.feedId };
  }

  /** Sends every change after `position` to `sink`, until `stop` is called, the feed closes or the client falls behind. */
  follow(position: bigint, sink: ChangeSink): { stop(): void } {
    const stream: Stream = { sink, position, live: false, full: false, closed: false };
    this.streams.add(stream);
    void this.catchUp(stream);
    void this.tail();
    return { stop: () => this.remove(stream) };
  }

  /** A write went through this process: look for its change now rather than at the next poll. */
  wake(): void {
    if (this.streams.size === 0 || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      void this.tail();
    });
  }

  /** Ends every stream cleanly and stops reading (the service is stopping). */
  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const stream of this.streams) {
      stream.closed = true;
      stream.sink.end();
    }
    this.streams.clear();
    for (const resolve of this.tailReaders.splice(0)) resolve();
  }

  private every(ms: number, work: () => void): void {
    const timer = setInterval(work, ms);
    timer.unref();
    this.timers.push(timer);
  }

  private remove(stream: Stream): void {
    stream.closed = true;
    this.streams.delete(stream);
  }

  private drop(stream: Stream): void {
    if (stream.closed) return;
    this.remove(stream);
    this.streamsDropped += 1;
    stream.sink.cut();
  }

  /** Reads the log after `head` into `recent` and hands the new events to the live streams. */
  private async tail(): Promise<void> {
    if (this.tailing) {
      this.tailAgain = true;
      return;
    }
    this.tailing = true;
    try {
      do {
        this.tailAgain = false;
        const state = await this.store.changeFeedState();
        if (this.head === undefined) {
          this.head = state.last;
          this.recentFrom = state.last;
        }
        await this.readUpTo(state);
        for (const resolve of this.tailReaders.splice(0)) resolve();
      } while (this.tailAgain && !this.closed);
    } catch (error) {
      // The store is down or busy: the streams stay open (heartbeats go on) and the next poll tries again.
      this.logger.warn(describeDriverError(error), 'reading the change log failed; trying again');
    } finally {
      this.tailing = false;
    }
  }

  private async readUpTo(state: ChangeFeedState): Promise<void> {
    while (this.head! < state.last && !this.closed) {
      const changes = await this.store.changesAfter(this.head!, READ_BATCH);
      for (const change of changes) this.keep({ position: change.position, text: eventText(state.feedId, change) });
      const last = changes.at(-1)?.position ?? this.head!;
      // Every change up to state.last had its position when it was read: fewer than a batch
      // means none is left up to there (positions may skip numbers).
      this.head = changes.length < READ_BATCH && last < state.last ? state.last : last;
      const shared = new Map<bigint, Buffer>();
      for (const stream of this.streams) if (stream.live) this.sendRecent(stream, shared);
    }
  }

  private keep(event: RecentEvent): void {
    this.recent.push(event);
    if (this.recent.length > RECENT_EVENTS) {
      const forgotten = this.recent.splice(0, this.recent.length - RECENT_EVENTS);
      this.recentFrom = forgotten.at(-1)!.position;
    }
  }

  /** The events of `recent` after the stream's position. */
  /**
   * The events of `recent` after the stream's position, in one write. Streams at the same
   * position (every live stream, usually) share the bytes: `shared` keeps them for the round.
   */
  private sendRecent(stream: Stream, shared?: Map<bigint, Buffer>): void {
    let low = 0;
    let high = this.recent.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.recent[middle]!.position <= stream.position) low = middle + 1;
      else high = middle;
    }
    if (low === this.recent.length || stream.closed || stream.full) return;
    let bytes = shared?.get(stream.position);
    if (bytes === undefined) {
      bytes = Buffer.from(this.recent.slice(low).map((event) => event.text).join(''));
      shared?.set(stream.position, bytes);
    }
    this.send(stream, bytes, this.recent.at(-1)!.position, this.recent.length - low);
  }

  /** Writes `count` events, the last at `position`, to the stream. */
  private send(stream: Stream, bytes: Buffer, position: bigint, count: number): void {
    stream.sink.write(bytes);
    stream.position = position;
    this.eventsSent += count;
    if (stream.sink.buffered() > MAX_BUFFERED_BYTES) this.holdBack(stream);
  }

  /** Nothing more for this stream until its client takes what waits; dropped if it does not within STALLED_MS. */
  private holdBack(stream: Stream): void {
    stream.full = true;
    stream.live = false;
    const stalled = setTimeout(() => this.drop(stream), STALLED_MS);
    stalled.unref();
    stream.sink.onceTaken(() => {
      clearTimeout(stalled);
      if (stream.closed) return;
      stream.full = false;
      void this.catchUp(stream);
    });
  }

  /** A stream that starts before what `recent` holds reads the log on its own until it reaches it. */
  private async catchUp(stream: Stream): Promise<void> {
    try {
      while (!stream.closed && !stream.full) {
        if (this.head === undefined || this.recentFrom === undefined) {
          await this.nextTail();
          continue;
        }
        if (stream.position >= this.recentFrom) {
          stream.live = true;
          this.sendRecent(stream);
          return;
        }
        // Every change up to the tail reader's head had its position before this read.
        const positionedUpTo = this.head;
        const changes = await this.store.changesAfter(stream.position, READ_BATCH);
        // Pruned while this stream read? Then changes after its position may be gone: cut it;
        // its client reconnects and is told to list again (410).
        const { prunedThrough, feedId } = await this.store.changeFeedState();
        if (prunedThrough > stream.position) throw new Error("the changes after this stream's position were pruned while it caught up");
        if (stream.closed) return;
        if (changes.length > 0) {
          this.send(stream, Buffer.from(changes.map((change) => eventText(feedId, change)).join('')), changes.at(-1)!.position, changes.length);
        }
        if (stream.full) return;
        // Fewer than a batch: the log holds nothing more up to there (positions may skip numbers).
        if (changes.length < READ_BATCH && stream.position < positionedUpTo) stream.position = positionedUpTo;
      }
    } catch (error) {
      this.logger.warn(describeDriverError(error), 'a change stream could not catch up; its client resumes from its cursor');
      this.drop(stream);
    }
  }

  /** Resolves after the tail reader's next round (or when the feed closes). */
  private nextTail(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.tailReaders.push(resolve);
      void this.tail();
    });
  }

  private async prune(): Promise<void> {
    try {
      while (!this.closed && (await this.store.pruneChanges(this.settings.retentionMs)) > 0) {
        await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      this.logger.warn(describeDriverError(error), 'pruning old changes failed; trying again later');
    }
  }
}

/** A change as an SSE event: its cursor, its kind, and the book (with its version) as JSON. */
export function eventText(feedId: string, { position, kind, book }: BookChange): string {
  const data = 'title' in book ? `${bookJson(book).slice(0, -1)},"version":${book.version}}` : `{"id":${book.id},"version":${book.version}}`;
  return `id: ${encodeChangeCursor({ feedId, position })}\nevent: ${kind}\ndata: ${data}\n\n`;
}
