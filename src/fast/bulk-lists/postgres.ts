// A chunk of the list on PostgreSQL for the speed path bulk-lists (index.ts): one
// `COPY (SELECT … ORDER BY id LIMIT n) TO STDOUT` on a pooled connection, read off the socket
// (postgres-copy-out.ts) and turned into JSON as it arrives (postgres-copy-json.ts). COPY takes
// no parameters: the id after which the chunk starts is our own bigint, written as its digits.
import type pg from 'pg';
import { readBorrowed, type Chunk } from './json-books.js';
import { CopyOut } from './postgres-copy-out.js';
import { CopyTextToJson } from './postgres-copy-json.js';

export async function readPostgresChunk(connect: () => Promise<pg.PoolClient>, afterId: bigint, rows: number, pieceBytes: number): Promise<Chunk> {
  const client = await connect();
  return readBorrowed(
    (failed) => client.release(failed),
    async () => {
      const converter = new CopyTextToJson(pieceBytes);
      const text = `COPY (SELECT id, title, author, year FROM books WHERE id > ${afterId} ORDER BY id LIMIT ${rows}) TO STDOUT`;
      const copy = new CopyOut(text, (bytes, start, end) => {
        converter.write(bytes, start, end);
        converter.collect();
      });
      client.query(copy);
      await copy.done;
      if (!converter.atRowBoundary) throw new Error('COPY ended inside a row');
      converter.collect(true);
      return converter.chunk;
    },
  );
}
