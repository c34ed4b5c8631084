// A chunk of the list on MySQL and MariaDB for the speed path bulk-lists (index.ts): one
// `SELECT … ORDER BY id LIMIT` on a pooled connection, its rows read by mysql2 as usual (the
// protocol, the time limit, errors) except that each row packet is handed to MysqlRowsToJson
// instead of becoming a JavaScript array of strings. mysql2 lets a caller build its Query
// (Connection.createQuery) and send it (connection.query); the row state of that one query is
// replaced, on the object itself.
import mysql from 'mysql2';
import type { RawMysqlConnection } from '../../store/driver.js';
import { readBorrowed, type Chunk } from './json-books.js';
import { MysqlRowsToJson } from './mysql-text-rows.js';

/** What mysql2 hands a Query's row state: one packet, its payload from `offset` to `end`. */
interface RowPacket {
  buffer: Buffer;
  offset: number;
  end: number;
  isEOF(): boolean;
}

type RowState = (this: unknown, packet: RowPacket, connection: unknown) => unknown;

/** mysql2's Connection.createQuery(options, callback, undefined, config) as it is (its typings leave out `config`). */
type CreateQuery = (options: object, callback: (error: Error | null) => void, values: undefined, config: unknown) => { row: RowState };

export async function readMysqlChunk(lend: () => Promise<RawMysqlConnection>, afterId: bigint, rows: number, pieceBytes: number): Promise<Chunk> {
  const { connection, timeoutMs, release } = await lend();
  return readBorrowed(release, async () => {
    const converter = new MysqlRowsToJson(pieceBytes);
    await new Promise<void>((resolve, reject) => {
      const query = (mysql.Connection.createQuery as unknown as CreateQuery)(
        { sql: 'SELECT id, title, author, year FROM books WHERE id > ? ORDER BY id LIMIT ?', values: [afterId, rows], timeout: timeoutMs },
        (error) => (error ? reject(error) : resolve()),
        undefined,
        connection.config,
      );
      const rowsAsUsual = Object.getPrototypeOf(query).row as RowState;
      const row: RowState = function (this: unknown, packet, from) {
        // The packet after the last row: mysql2 finishes the query as usual.
        if (packet.isEOF()) return rowsAsUsual.call(this, packet, from);
        converter.writeRow(packet.buffer, packet.offset, packet.end);
        converter.collect();
        return row;
      };
      query.row = row;
      connection.query(query as never);
    });
    converter.collect(true);
    return converter.chunk;
  });
}
