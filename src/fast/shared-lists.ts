// The speed path shared-lists: GET /books answers shared by the requests that arrive together,
// standing in for the plain answers of src/http/book-list.ts (each request reads and serializes
// its own) through FastPaths.bookLists (src/seams.ts). The answer is serialized
// once, into Buffers, and every request of the group is sent those same bytes. A list shorter
// than one store page is one Buffer (sent with Content-Length); a longer one is streamed to
// each client (chunked) from one shared list of page Buffers, read from the store page by
// page as the fastest of its clients needs the next one.
//
// Nothing is cached across groups: a group is formed by DataLoader (no cache) like the store's
// shared queries (src/fast/batched-queries/index.ts), so its first query is sent after every
// request in it arrived (the requests of one turn, or, while a group's first page is being
// read, every request that arrives meanwhile), and each page after that later still: every request sees every write
// acknowledged before it arrived.
//
// The bytes of a piece are also reused by a later group when its own query read exactly the
// same text for that place in the list (RecentBytes): the answer is still the one its query
// read, only the Buffer is not made again. Under a steady read load that is every group, so
// no Buffer is allocated per group and the memory of dead ones does not pile up outside the
// JavaScript heap.
//
// Memory: a group holds at most MAX_SHARED_BYTES of its pages. A client that falls further
// behind than that (a slow reader) goes on alone from the last book it was sent, with queries
// of its own (sent later, so they see every write acknowledged before it arrived too); the
// others are never held back by it.
//
// With tracing on, a group's queries show in the trace of every request of the group (its first
// page, and each page after it: src/tracing/shared-loader.ts); a client that goes on alone reads
// the rest outside them.
//
// What it buys: 16 clients listing at once cost one query and one serialization instead of 16
// (docs/benchmarks.md, "What each speed path buys").
import {
  LIST_PAGE_SIZE,
  LIST_PREFIX,
  LIST_SUFFIX,
  isLastPage,
  listPieces,
  type BookListAnswers,
  type ListAnswer,
} from '../http/book-list.js';
import type { BookStore } from '../store/book-store.js';
import { sharedLoader, type Loader } from '../tracing/shared-loader.js';
import { NO_TRACING, type BatchRequests, type Tracing } from '../tracing/tracing.js';

/**
 * Longest a group of list requests waits for the group before it to read its first page: a
 * read normally takes milliseconds; one that takes longer is left to finish on its own.
 */
export const MAX_WAIT_FOR_READ_MS = 100;

/** Most bytes of pages one group keeps for its clients that are behind the fastest. */
export const MAX_SHARED_BYTES = 8 * 1024 * 1024;

const SEPARATOR = ',';

/** One piece of a streamed list, with the id of the last book it holds (where the next page starts). */
interface Piece {
  bytes: Buffer;
  lastId: bigint | undefined;
}

export class SharedListAnswers implements BookListAnswers {
  /** How many answers were serialized: one per group of list requests that arrived together. */
  serialized = 0;
  private readonly groups: Loader<true, ListAnswer>;
  private readonly recent = new RecentBytes();
  /** The first page of the last group, while it is being read. */
  private building: Promise<ListAnswer> | undefined;
  /** When the last group's first page was asked for (performance.now()). */
  private buildingSince = 0;

  constructor(
    private readonly store: BookStore,
    tracing: Tracing = NO_TRACING,
  ) {
    this.groups = sharedLoader(
      tracing,
      async (keys: readonly true[], requests) => {
        const building = this.build(requests);
        this.building = building;
        this.buildingSince = performance.now();
        const answer = await building.catch((error: unknown) => (error instanceof Error ? error : new Error(String(error), { cause: error })));
        if (this.building === building) this.building = undefined;
        return keys.map(() => answer);
      },
      {
        cache: false,
        // While a group's first page is being read, the requests that arrive form the next
        // group, whose query is sent when that read is done (after they all arrived): under
        // load, groups grow instead of queries piling up. A read still going MAX_WAIT_FOR_READ_MS
        // after it was sent (a store that stopped answering) is not waited for any longer, so a
        // list request's own query starts at most that late and it answers within its own
        // limits (DB_QUERY_TIMEOUT), not the read's before it too. Otherwise, as DataLoader
        // does: once the turn's promise jobs are done.
        batchScheduleFn: (dispatch) => {
          const building = this.building;
          const waitMs = building ? this.buildingSince + MAX_WAIT_FOR_READ_MS - performance.now() : 0;
          if (!building || waitMs <= 0) {
            void Promise.resolve().then(() => process.nextTick(dispatch));
            return;
          }
          let dispatched = false;
          const dispatchOnce = () => {
            if (dispatched) return;
            dispatched = true;
            clearTimeout(timer);
            dispatch();
          };
          const timer = setTimeout(dispatchOnce, waitMs);
          void building.then(dispatchOnce, dispatchOnce);
        },
      },
    );
  }

  /** The answer for a list request: shared with the list requests that arrived together (its group). */
  answer(): Promise<ListAnswer> {
    return this.groups.load(true);
  }

  private async build(requests: BatchRequests): Promise<ListAnswer> {
    this.serialized += 1;
    const first = await requests.all(() => this.store.listPageJson(0n, LIST_PAGE_SIZE));
    if (first.count < LIST_PAGE_SIZE) return { kind: 'whole', body: this.recent.bytesOf('whole', first.json, LIST_PREFIX, ']}') };
    const head = this.recent.bytesOf('head', first.json, LIST_PREFIX, '');
    const list = new SharedList(this.store, this.recent, head, first.lastId, requests);
    return { kind: 'streamed', chunks: () => list.chunks() };
  }
}

/**
 * A streamed list's pieces, read from the store once for every client of the group: the
 * envelope's head with the first page, each further page (a comma, then its books), the tail.
 */
export class SharedList {
  /** The pieces still held; `pieces[0]` is piece number `dropped`. */
  private readonly pieces: Piece[] = [];
  private dropped = 0;
  private heldBytes = 0;
  private reading: Promise<void> | undefined;
  private failure: Error | undefined;
  /** The pieces after the first page, when the store streams them (BookStore.streamListJson). */
  private rest: AsyncIterator<Piece> | undefined;

  constructor(
    private readonly store: BookStore,
    private readonly recent: RecentBytes,
    head: Buffer,
    firstLastId: bigint | undefined,
    /** The group's requests: each page after the first is read for all of them. */
    private readonly requests: BatchRequests,
  ) {
    this.add({ bytes: head, lastId: firstLastId });
    if (firstLastId === undefined) this.add({ bytes: LIST_SUFFIX, lastId: undefined });
  }

  /** One client's copy of the stream: the shared Buffers themselves, in order. */
  async *chunks(): AsyncGenerator<Buffer> {
    let index = 0;
    let lastId: bigint | undefined;
    for (;;) {
      if (index < this.dropped) {
        // Too far behind: the pieces it needs are let go; the rest of its list is its own.
        yield* listPieces(this.store, this.recent.bytesOf, undefined, lastId);
        return;
      }
      const piece = this.pieces[index - this.dropped];
      if (piece) {
        index += 1;
        yield piece.bytes;
        if (piece.bytes === LIST_SUFFIX) return;
        lastId = piece.lastId;
        continue;
      }
      if (this.failure) throw this.failure;
      await this.readNext();
    }
  }

  /** The next page, read once however many clients wait for it. */
  private readNext(): Promise<void> {
    this.reading ??= this.readPage().finally(() => {
      this.reading = undefined;
    });
    return this.reading;
  }

  private async readPage(): Promise<void> {
    const after = this.pieces.at(-1)!.lastId!;
    try {
      if (this.store.streamListJson) {
        // The rest of the list in the store's larger pieces (BookStore.streamListJson).
        this.rest ??= this.store.streamListJson(after)[Symbol.asyncIterator]();
        const next = await this.rest.next();
        this.add(next.done ? { bytes: LIST_SUFFIX, lastId: undefined } : next.value);
        return;
      }
      const page = await this.requests.all(() => this.store.listPageJson(after, LIST_PAGE_SIZE));
      if (page.count > 0) this.add({ bytes: this.recent.bytesOf(`after ${after}`, page.json, SEPARATOR, ''), lastId: page.lastId });
      if (isLastPage(page)) this.add({ bytes: LIST_SUFFIX, lastId: undefined });
    } catch (error) {
      // Every client waiting for this page or one after it aborts its response (as a stream would).
      this.failure = error instanceof Error ? error : new Error(String(error), { cause: error });
    }
  }

  private add(piece: Piece): void {
    this.pieces.push(piece);
    this.heldBytes += piece.bytes.length;
    // Keep the newest piece whatever its size: the next page starts after it.
    while (this.heldBytes > MAX_SHARED_BYTES && this.pieces.length > 1) {
      this.heldBytes -= this.pieces.shift()!.bytes.length;
      this.dropped += 1;
    }
  }
}

/**
 * The bytes of the pieces read last, by their place in the list: a piece whose query read the
 * same text as the last one read for its place gets the same Buffer. At most MAX_SHARED_BYTES
 * of them are kept (the places first read); a piece beyond that is made anew every time.
 */
class RecentBytes {
  private readonly byPlace = new Map<string, { json: string; bytes: Buffer }>();
  private held = 0;

  readonly bytesOf = (place: string, json: string, before: string, after: string): Buffer => {
    const known = this.byPlace.get(place);
    if (known?.json === json) return known.bytes;
    const bytes = Buffer.from(before + json + after);
    if (known) {
      this.byPlace.delete(place);
      this.held -= known.bytes.length;
    }
    if (this.held + bytes.length <= MAX_SHARED_BYTES) {
      this.byPlace.set(place, { json, bytes });
      this.held += bytes.length;
    }
    return bytes;
  };
}
