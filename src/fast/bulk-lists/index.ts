// Speed path bulk-lists: GET /books without parameters reads its books after the first page in
// chunks of CHUNK_ROWS books, one statement each, and writes their JSON from the database's
// wire bytes (json-books.ts) instead of from row objects: on PostgreSQL with
// `COPY (SELECT … ORDER BY id LIMIT 50000) TO STDOUT` (postgres.ts), on MySQL and MariaDB with
// the same SELECT, each row packet converted as mysql2 reads it (mysql.ts). It fills the store's
// optional BookStore.streamListJson, which the list's readers (src/http/book-list.ts, the
// shared-lists path) use when it is there; without it they read pages of 1,000 books with
// listPageJson. SQLite is left as it is: its pages are already JSON written by SQLite itself.
//
// Why: at 1,000,000 books the plain list took 2.4 s one at a time on PostgreSQL (row_to_json
// and string_agg: about 2 s of its CPU; with plain rows, pg's strings and objects: 2 s) and
// 1.7 s on MariaDB (mysql2's row arrays, then bookJson). This path: 0.5 s and 0.4 s
// (docs/benchmarks-changes.md, "The whole list by COPY and by MySQL's text rows").
//
// What stays as the plain list does it: each chunk is its own statement, after the last id of
// the one before (keyset), so every book present throughout the walk is sent exactly once and
// no statement is long: none comes near DB_QUERY_TIMEOUT, none holds a snapshot for the whole
// list. A chunk is read whole at once (about 4 MB of JSON), never paced by a slow client; the
// next one is read while this one is sent. These statements are not traced (they bypass
// Kysely); the list's first page still is.
import type { BookStore, ListJsonPiece } from '../../store/book-store.js';
import { BookStoreLayer } from '../../store/book-store-layer.js';
import type { BookStoreDriver } from '../../store/driver.js';
import type { StoreLayer } from '../../store/open-store.js';
import type { Chunk } from './json-books.js';

/** Books per statement: about 4 MB of JSON, 20 statements for 1,000,000 books. */
export const CHUNK_ROWS = 50_000;

/** Bytes of JSON per piece handed out (the response is written in pieces about this size). */
const PIECE_BYTES = 256 * 1024;

type ReadChunk = (afterId: bigint) => Promise<Chunk>;

export function bulkLists(): StoreLayer {
  return {
    around: async (store, driver) => {
      const read = await chunkReader(driver);
      return read ? new BulkListStore(store, read) : store;
    },
  };
}

/** The database's way to read a chunk; undefined where there is none (SQLite). Each is loaded only for its database. */
async function chunkReader(driver: BookStoreDriver): Promise<ReadChunk | undefined> {
  const { postgresClient, mysqlConnection } = driver;
  if (postgresClient) {
    const { readPostgresChunk } = await import('./postgres.js');
    return (afterId) => readPostgresChunk(postgresClient, afterId, CHUNK_ROWS, PIECE_BYTES);
  }
  if (mysqlConnection) {
    const { readMysqlChunk } = await import('./mysql.js');
    return (afterId) => readMysqlChunk(mysqlConnection, afterId, CHUNK_ROWS, PIECE_BYTES);
  }
  return undefined;
}

class BulkListStore extends BookStoreLayer {
  override readonly streamListJson = (afterId: bigint): AsyncIterable<ListJsonPiece> => this.chunksAfter(afterId);

  constructor(
    inner: BookStore,
    private readonly readChunk: ReadChunk,
  ) {
    super(inner);
  }

  private async *chunksAfter(afterId: bigint): AsyncGenerator<ListJsonPiece> {
    let next = this.readChunk(afterId);
    for (;;) {
      const chunk = await next;
      const last = chunk.pieces.at(-1);
      const more = chunk.books === CHUNK_ROWS && last !== undefined;
      if (more) {
        // Read ahead; a failure surfaces when this chunk's pieces are sent (or never, if the
        // reader stopped following): handled, so that it is not an unhandled rejection.
        next = this.readChunk(last.lastId);
        next.catch(() => undefined);
      }
      for (const { bytes, lastId } of chunk.pieces) yield { bytes, lastId };
      if (!more) return;
    }
  }
}
