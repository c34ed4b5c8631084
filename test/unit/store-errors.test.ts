// Each database module's error classifier (src/store/<kind>/errors.ts) on the errors its
// driver really throws: provoked against the real databases where they can be (constraint
// violations, lock conflicts, timeouts, dropped and refused connections, closed pools), built
// with the exact fields the driver sets where they cannot (a failing disk, too many clients).
// 'unavailable' becomes a 503 (StoreUnavailableError); 'conflict', 'constraint' and anything
// else stay what they are (500).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { createConnection, createPool, type Connection } from 'mysql2/promise';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rethrowStoreError, StoreUnavailableError } from '../../src/store/errors.js';
import { classifyMysqlError, isMysqlStatementTimeout, isRefusedStatement, NoAnswerError } from '../../src/store/mysql/errors.js';
import { classifyPostgresError } from '../../src/store/postgres/errors.js';
import { classifySqliteError } from '../../src/store/sqlite/errors.js';
import { openSqlite } from '../helpers/stores/sqlite.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import type { StoreKind } from '../helpers/stores/dialects.js';

/** The error `work` throws (synchronously or by rejecting); fails the test when it succeeds. */
async function failure(work: () => unknown): Promise<Error & Record<string, unknown>> {
  try {
    await work();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error('expected a failure');
}

/** A TCP server that accepts connections and never says a word: connection attempts time out. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = await silentServer();
  await server.close();
  return server.port;
}

function suiteFor(kind: StoreKind) {
  return { sqlite: sqliteErrors, postgres: postgresErrors, mysql: mysqlErrors }[kind];
}

forEachStore((kind) => suiteFor(kind)());

function sqliteErrors() {
  let dir: string;
  let file: string;
  let db: SqliteDatabase.Database;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'store-errors-'));
    file = join(dir, 'test.db');
    db = openSqlite(file);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA foreign_keys = ON');
    db.exec('create table parents (id integer primary key)');
    db.exec('create table books (id integer primary key, title text not null unique, parent integer references parents (id))');
    db.exec("insert into books (title) values ('Dune')");
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ['NOT NULL', "insert into books (title) values (null)", 'SQLITE_CONSTRAINT_NOTNULL'],
    ['UNIQUE', "insert into books (title) values ('Dune')", 'SQLITE_CONSTRAINT_UNIQUE'],
    ['FOREIGN KEY', "insert into books (title, parent) values ('Emma', 42)", 'SQLITE_CONSTRAINT_FOREIGNKEY'],
  ])('%s violated → constraint', async (_rule, statement, code) => {
    const error = await failure(() => db.exec(statement));
    expect(error).toBeInstanceOf(SqliteDatabase.SqliteError);
    expect(error.code).toBe(code);
    expect(classifySqliteError(error)).toBe('constraint');
  });

  it('the write lock held by another connection past busy_timeout (SQLITE_BUSY) → unavailable', async () => {
    const other = openSqlite(file, { timeout: 0 });
    db.exec('begin immediate');
    try {
      const error = await failure(() => other.exec('begin immediate'));
      expect(error.code).toBe('SQLITE_BUSY');
      expect(classifySqliteError(error)).toBe('unavailable');
    } finally {
      db.exec('rollback');
      other.close();
    }
  });

  it("a read snapshot that another connection's commit made stale (SQLITE_BUSY_SNAPSHOT) → conflict", async () => {
    const other = openSqlite(file, { timeout: 0 });
    db.exec('begin');
    try {
      db.prepare('select count(*) from books').get(); // the transaction now reads a snapshot
      other.exec("insert into books (title) values ('Emma')");
      const error = await failure(() => db.exec("insert into books (title) values ('Ulysses')"));
      expect(error.code).toBe('SQLITE_BUSY_SNAPSHOT');
      expect(classifySqliteError(error)).toBe('conflict');
    } finally {
      db.exec('rollback');
      other.close();
    }
  });

  it('the database at its size limit (SQLITE_FULL) → unavailable', async () => {
    const full = openSqlite(join(dir, 'full.db'));
    full.exec('create table blobs (data blob)');
    full.exec('PRAGMA max_page_count = 8');
    const error = await failure(() => full.exec('insert into blobs (data) values (zeroblob(100000))'));
    full.close();
    expect(error.code).toBe('SQLITE_FULL');
    expect(classifySqliteError(error)).toBe('unavailable');
  });

  it('a file that cannot be opened (SQLITE_CANTOPEN) → unavailable', async () => {
    const error = await failure(() => openSqlite(dir)); // a directory
    expect(error.code).toBe('SQLITE_CANTOPEN');
    expect(classifySqliteError(error)).toBe('unavailable');
  });

  it.each([
    ['SQLITE_IOERR', 'disk I/O error'],
    ['SQLITE_IOERR_WRITE', 'disk I/O error'],
    ['SQLITE_IOERR_FSYNC', 'disk I/O error'],
    ['SQLITE_LOCKED', 'database table is locked'],
  ])('%s (a failing disk, a locked table: built as better-sqlite3 builds it) → unavailable', (code, message) => {
    expect(classifySqliteError(new SqliteDatabase.SqliteError(message, code))).toBe('unavailable');
  });

  it('a syntax error, a closed connection and a non-error → nothing (500)', async () => {
    expect(classifySqliteError(await failure(() => db.exec('selec 1')))).toBeUndefined();
    const closed = openSqlite(join(dir, 'closed.db'));
    closed.close();
    const error = await failure(() => closed.exec('select 1'));
    expect(error).toBeInstanceOf(TypeError);
    expect(classifySqliteError(error)).toBeUndefined();
    expect(classifySqliteError('SQLITE_BUSY')).toBeUndefined();
  });
}

function postgresErrors() {
  let store: TestStore;
  const clients: pg.Client[] = [];

  async function connect(config: pg.ClientConfig = {}): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: store.url, ...config });
    client.on('error', () => undefined); // a terminated connection reports here too
    await client.connect();
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    store = await createTestStore('postgres');
    const client = await connect();
    await client.query('create table parents (id int primary key)');
    await client.query('create table books (id int primary key, title text not null unique, parent int references parents (id))');
    await client.query("insert into books values (1, 'Dune'), (2, 'Emma')");
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.end().catch(() => undefined)));
    await store.drop();
  });

  it.each([
    ['NOT NULL', "insert into books values (3, null)", '23502'],
    ['UNIQUE', "insert into books values (3, 'Dune')", '23505'],
    ['FOREIGN KEY', "insert into books values (3, 'Ulysses', 42)", '23503'],
  ])('%s violated → constraint', async (_rule, statement, sqlState) => {
    const error = await failure(async () => (await connect()).query(statement));
    expect(error).toBeInstanceOf(pg.DatabaseError);
    expect(error.code).toBe(sqlState);
    expect(classifyPostgresError(error)).toBe('constraint');
  });

  it('a serialization failure (40001) → conflict', async () => {
    const [a, b] = [await connect(), await connect()];
    await a.query('begin isolation level repeatable read');
    await b.query('begin isolation level repeatable read');
    await a.query('select * from books where id = 1');
    await b.query('select * from books where id = 1');
    await a.query("update books set title = 'Dune (a)' where id = 1");
    const pending = failure(() => b.query("update books set title = 'Dune (b)' where id = 1"));
    await a.query('commit');
    const error = await pending;
    await b.query('rollback');
    expect(error.code).toBe('40001');
    expect(classifyPostgresError(error)).toBe('conflict');
  });

  it('a deadlock (40P01) → conflict', async () => {
    const [a, b] = [await connect(), await connect()];
    for (const client of [a, b]) await client.query("begin; set local deadlock_timeout = '50ms'");
    await a.query("update books set title = 'Dune (a)' where id = 1");
    await b.query("update books set title = 'Emma (b)' where id = 2");
    const outcomes = await Promise.allSettled([
      a.query("update books set title = 'Emma (a)' where id = 2"),
      b.query("update books set title = 'Dune (b)' where id = 1"),
    ]);
    for (const client of [a, b]) await client.query('rollback');
    const error = outcomes.find((outcome) => outcome.status === 'rejected')?.reason as Error & { code?: string };
    expect(error.code).toBe('40P01');
    expect(classifyPostgresError(error)).toBe('conflict');
  });

  it('statement_timeout (57014) → unavailable', async () => {
    const client = await connect();
    await client.query('set statement_timeout = 50');
    const error = await failure(() => client.query('select pg_sleep(2)'));
    expect(error.code).toBe('57014');
    expect(classifyPostgresError(error)).toBe('unavailable');
  });

  it('a connection the server terminates (57P01), and a query on it afterwards → unavailable', async () => {
    const client = await connect();
    const reported = new Promise<Error>((resolve) => client.once('error', resolve));
    const { rows } = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    await (await connect()).query('select pg_terminate_backend($1)', [rows[0]!.pid]);
    const error = (await reported) as Error & { code?: string };
    expect(error.code).toBe('57P01');
    expect(classifyPostgresError(error)).toBe('unavailable');
    const next = await failure(() => client.query('select 1'));
    expect(next.message).toMatch(/Client has encountered a connection error|Connection terminated/);
    expect(classifyPostgresError(next)).toBe('unavailable');
  });

  it("query_timeout ('Query read timeout') → unavailable", async () => {
    const client = await connect({ query_timeout: 50 });
    const error = await failure(() => client.query('select pg_sleep(2)'));
    expect(error.message).toBe('Query read timeout');
    expect(classifyPostgresError(error)).toBe('unavailable');
  });

  it("no pooled connection within connectionTimeoutMillis ('timeout exceeded when trying to connect') → unavailable", async () => {
    const pool = new pg.Pool({ connectionString: store.url, max: 1, connectionTimeoutMillis: 100 });
    const held = await pool.connect();
    try {
      const error = await failure(() => pool.connect());
      expect(error.message).toMatch(/timeout exceeded when trying to connect/);
      expect(classifyPostgresError(error)).toBe('unavailable');
    } finally {
      held.release();
      await pool.end();
    }
  });

  it("a pool that has been ended ('Cannot use a pool after calling end') → unavailable", async () => {
    const pool = new pg.Pool({ connectionString: store.url });
    await pool.end();
    const error = await failure(() => pool.query('select 1'));
    expect(error.message).toMatch(/Cannot use a pool after calling end/);
    expect(classifyPostgresError(error)).toBe('unavailable');
  });

  it('a refused connection (ECONNREFUSED) → unavailable', async () => {
    const client = new pg.Client({ host: '127.0.0.1', port: await closedPort(), user: 'postgres' });
    const error = await failure(() => client.connect());
    expect(error.code).toBe('ECONNREFUSED');
    expect(classifyPostgresError(error)).toBe('unavailable');
  });

  it("a server that never answers ('Connection terminated due to connection timeout') → unavailable", async () => {
    const server = await silentServer();
    // A pool, as the store has: a bare client says only 'timeout expired'.
    const pool = new pg.Pool({ host: '127.0.0.1', port: server.port, user: 'postgres', connectionTimeoutMillis: 100 });
    try {
      const error = await failure(() => pool.query('select 1'));
      expect(error.message).toBe('Connection terminated due to connection timeout');
      expect(classifyPostgresError(error)).toBe('unavailable');
    } finally {
      await pool.end();
      await server.close();
    }
  });

  it.each([
    ['53300', 'sorry, too many clients already'],
    ['57P03', 'the database system is starting up'],
    ['08006', 'connection failure'],
  ])('SQLSTATE %s (built as pg-protocol builds it) → unavailable', (sqlState, message) => {
    const error = new pg.DatabaseError(message, message.length, 'error');
    Object.assign(error, { severity: 'FATAL', code: sqlState });
    expect(classifyPostgresError(error)).toBe('unavailable');
  });

  it('a syntax error (42601) and a bad value (22P02) → nothing (500)', async () => {
    const client = await connect();
    const syntax = await failure(() => client.query('selec 1'));
    expect(syntax.code).toBe('42601');
    expect(classifyPostgresError(syntax)).toBeUndefined();
    const value = await failure(() => client.query("select 'x'::int"));
    expect(value.code).toBe('22P02');
    expect(classifyPostgresError(value)).toBeUndefined();
  });
}

function mysqlErrors() {
  let store: TestStore;
  const connections: Connection[] = [];

  async function connect(): Promise<Connection> {
    const connection = await createConnection({ uri: store.url });
    connection.on('error', () => undefined); // a killed connection reports here too
    connections.push(connection);
    return connection;
  }

  beforeAll(async () => {
    store = await createTestStore('mysql');
    const connection = await connect();
    await connection.query('create table parents (id int primary key) engine = InnoDB');
    await connection.query(
      'create table books (id int primary key, title varchar(50) not null unique, parent int, year int check (year > 0), ' +
        'foreign key (parent) references parents (id)) engine = InnoDB',
    );
    await connection.query("insert into books (id, title) values (1, 'Dune'), (2, 'Emma')");
  });

  afterAll(async () => {
    await Promise.all(connections.map((connection) => connection.end().catch(() => undefined)));
    await store.drop();
  });

  it.each([
    ['NOT NULL', "insert into books (id, title) values (3, null)", 'ER_BAD_NULL_ERROR'],
    ['UNIQUE', "insert into books (id, title) values (3, 'Dune')", 'ER_DUP_ENTRY'],
    ['FOREIGN KEY', "insert into books (id, title, parent) values (3, 'Ulysses', 42)", 'ER_NO_REFERENCED_ROW_2'],
  ])('%s violated → constraint', async (_rule, statement, code) => {
    const error = await failure(async () => (await connect()).query(statement));
    expect([error.code, error.sqlState]).toEqual([code, '23000']);
    expect(classifyMysqlError(error)).toBe('constraint');
  });

  it('CHECK violated → constraint', async () => {
    const error = await failure(async () => (await connect()).query("insert into books (id, title, year) values (3, 'Ulysses', -1)"));
    // MariaDB: ER_CONSTRAINT_FAILED, errno 4025, SQLSTATE 23000 (mysql2 names the errno after
    // MySQL's table, where 4025 is another error: the errno and SQLSTATE are what count).
    // MySQL: ER_CHECK_CONSTRAINT_VIOLATED, errno 3819, SQLSTATE HY000 (the next test).
    expect([4025, 3819]).toContain(error.errno);
    expect(classifyMysqlError(error)).toBe('constraint');
  });

  it('ER_CHECK_CONSTRAINT_VIOLATED as MySQL sends it (errno 3819, SQLSTATE HY000) → constraint', () => {
    const error = Object.assign(new Error("Check constraint 'books_chk_1' is violated."), {
      code: 'ER_CHECK_CONSTRAINT_VIOLATED',
      errno: 3819,
      sqlState: 'HY000',
    });
    expect(classifyMysqlError(error)).toBe('constraint');
  });

  it('a deadlock (ER_LOCK_DEADLOCK, 1213) → conflict', async () => {
    const [a, b] = [await connect(), await connect()];
    for (const connection of [a, b]) await connection.query('begin');
    await a.query("update books set title = 'Dune (a)' where id = 1");
    await b.query("update books set title = 'Emma (b)' where id = 2");
    const outcomes = await Promise.allSettled([
      a.query("update books set title = 'Emma (a)' where id = 2"),
      b.query("update books set title = 'Dune (b)' where id = 1"),
    ]);
    for (const connection of [a, b]) await connection.query('rollback');
    const error = outcomes.find((outcome) => outcome.status === 'rejected')?.reason as Error & { code?: string; errno?: number };
    expect([error.code, error.errno]).toEqual(['ER_LOCK_DEADLOCK', 1213]);
    expect(classifyMysqlError(error)).toBe('conflict');
  });

  it('a lock wait past innodb_lock_wait_timeout (ER_LOCK_WAIT_TIMEOUT, 1205) → unavailable, a statement timeout (the lock was held elsewhere; not retried)', async () => {
    const [a, b] = [await connect(), await connect()];
    await b.query('set session innodb_lock_wait_timeout = 1');
    await a.query('begin');
    await a.query("update books set title = 'Dune (a)' where id = 1");
    try {
      const error = await failure(() => b.query("update books set title = 'Dune (b)' where id = 1"));
      expect([error.code, error.errno]).toEqual(['ER_LOCK_WAIT_TIMEOUT', 1205]);
      expect(classifyMysqlError(error)).toBe('unavailable');
      expect(isMysqlStatementTimeout(error)).toBe(true);
    } finally {
      await a.query('rollback');
    }
  });

  it("a statement past MariaDB's max_statement_time (1969) → unavailable, a statement timeout", async () => {
    const [a, b] = [await connect(), await connect()];
    await b.query('set session max_statement_time = 0.5');
    await a.query('begin');
    await a.query("update books set title = 'Dune (a)' where id = 1");
    try {
      const error = await failure(() => b.query("update books set title = 'Dune (b)' where id = 1"));
      expect(error.errno).toBe(1969);
      expect(classifyMysqlError(error)).toBe('unavailable');
      expect(isMysqlStatementTimeout(error)).toBe(true);
    } finally {
      await a.query('rollback');
    }
  });

  it('a connection the server kills (PROTOCOL_CONNECTION_LOST), and a query on it afterwards → unavailable', async () => {
    const connection = await connect();
    const reported = new Promise<Error>((resolve) => connection.once('error', resolve));
    await (await connect()).query(`kill ${connection.threadId}`);
    const error = (await reported) as Error & { code?: string };
    expect(error.code).toBe('PROTOCOL_CONNECTION_LOST');
    expect(classifyMysqlError(error)).toBe('unavailable');
    const next = await failure(() => connection.query('select 1'));
    expect(next.message).toMatch(/closed state|Connection lost/);
    expect(classifyMysqlError(next)).toBe('unavailable');
  });

  it("a pool that has been ended ('Pool is closed.') → unavailable", async () => {
    const pool = createPool({ uri: store.url });
    await pool.end();
    const error = await failure(() => pool.query('select 1'));
    expect(error.message).toMatch(/Pool is closed/);
    expect(classifyMysqlError(error)).toBe('unavailable');
  });

  it('a refused connection (ECONNREFUSED) → unavailable', async () => {
    const port = await closedPort();
    const error = await failure(() => createConnection({ host: '127.0.0.1', port, user: 'root' }));
    expect(error.code).toBe('ECONNREFUSED');
    expect(classifyMysqlError(error)).toBe('unavailable');
  });

  it("a server that never answers ('connect ETIMEDOUT') → unavailable", async () => {
    const server = await silentServer();
    try {
      const error = await failure(() => createConnection({ host: '127.0.0.1', port: server.port, user: 'root', connectTimeout: 100 }));
      expect([error.code, error.message]).toEqual(['ETIMEDOUT', 'connect ETIMEDOUT']);
      expect(classifyMysqlError(error)).toBe('unavailable');
    } finally {
      await server.close();
    }
  });

  it('too many connections (ER_CON_COUNT_ERROR, built as mysql2 builds it) → unavailable', () => {
    const error = Object.assign(new Error('Too many connections'), {
      code: 'ER_CON_COUNT_ERROR',
      errno: 1040,
      sqlState: '08004',
      sqlMessage: 'Too many connections',
    });
    expect(classifyMysqlError(error)).toBe('unavailable');
  });

  it('a syntax error (ER_PARSE_ERROR) → nothing (500)', async () => {
    const error = await failure(async () => (await connect()).query('selec 1'));
    expect(error.code).toBe('ER_PARSE_ERROR');
    expect(classifyMysqlError(error)).toBeUndefined();
  });
  // A shared INSERT … RETURNING (MariaDB) refused by the server is written again book by book;
  // one whose outcome is unknown never is (the speed path batched-queries: src/fast/batched-queries/).
  it('refused statements: a syntax error, a value too long, a broken rule; not a conflict, a statement timeout, a lost connection or a client timeout', async () => {
    const refused = [
      await failure(async () => (await connect()).query('selec 1')),
      await failure(async () => (await connect()).query(`insert into books (id, title) values (3, '${'x'.repeat(60)}')`)),
      await failure(async () => (await connect()).query("insert into books (id, title) values (3, 'Dune')")),
    ];
    expect(refused.map((error) => error.code)).toEqual(['ER_PARSE_ERROR', 'ER_DATA_TOO_LONG', 'ER_DUP_ENTRY']);
    for (const error of refused) expect(isRefusedStatement(error), String(error.code)).toBe(true);

    const [a, b] = [await connect(), await connect()];
    await b.query('set session max_statement_time = 0.3');
    await a.query('begin');
    await a.query("update books set title = 'Dune (a)' where id = 1");
    const timedOut = await failure(() => b.query("update books set title = 'Dune (b)' where id = 1"));
    await a.query('rollback');
    expect(timedOut.errno).toBe(1969);
    const killed = await connect();
    const lost = new Promise<Error>((resolve) => killed.once('error', resolve));
    await (await connect()).query(`kill ${killed.threadId}`);
    const clientTimeout = await failure(async () => (await connect()).query({ sql: 'select sleep(2)', timeout: 100 }));
    expect(clientTimeout.code).toBe('PROTOCOL_SEQUENCE_TIMEOUT');
    const deadlock = Object.assign(new Error('Deadlock found when trying to get lock'), { code: 'ER_LOCK_DEADLOCK', errno: 1213, sqlState: '40001' });
    for (const error of [timedOut, await lost, clientTimeout, deadlock, new NoAnswerError('db:3306'), new Error('other')]) {
      expect(isRefusedStatement(error), String((error as { code?: unknown }).code ?? error.name)).toBe(false);
    }
  });
}

describe('errors inside errors', () => {
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
  const duplicate = Object.assign(new Error('duplicate key value'), { code: '23505' });

  it('an AggregateError (one per address tried) is unavailable when one of its errors is', () => {
    expect(classifyPostgresError(new AggregateError([new Error('other'), refused], ''))).toBe('unavailable');
    expect(classifyPostgresError(new AggregateError([deadlock, duplicate], ''))).toBe('conflict');
  });

  it('a cause is classified too; unavailable anywhere wins, else the outermost kind', () => {
    expect(classifyPostgresError(new Error('wrapped', { cause: refused }))).toBe('unavailable');
    expect(classifyPostgresError(Object.assign(new Error('x', { cause: refused }), { code: '23505' }))).toBe('unavailable');
    expect(classifyPostgresError(Object.assign(new Error('x', { cause: duplicate }), { code: '40P01' }))).toBe('conflict');
    expect(classifyPostgresError(new Error('wrapped', { cause: duplicate }))).toBe('constraint');
    const selfCaused: Error = new Error('loop');
    Object.assign(selfCaused, { cause: selfCaused });
    expect(classifyPostgresError(selfCaused)).toBeUndefined();
  });

  it("one database's codes mean nothing to another's classifier", () => {
    expect(classifySqliteError(refused)).toBeUndefined();
    expect(classifyMysqlError(Object.assign(new Error('x'), { code: '57014' }))).toBeUndefined();
    expect(classifyPostgresError(Object.assign(new Error('x'), { code: 'SQLITE_BUSY' }))).toBeUndefined();
  });
});

describe('rethrowStoreError: what the HTTP side sees', () => {
  const rethrown = (error: unknown) => {
    try {
      rethrowStoreError(error, classifyPostgresError);
    } catch (thrown) {
      return thrown;
    }
    throw new Error('expected a throw');
  };

  it('unavailable → StoreUnavailableError (503) with the driver error as its cause', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const thrown = rethrown(refused);
    expect(thrown).toBeInstanceOf(StoreUnavailableError);
    expect((thrown as Error).cause).toBe(refused);
  });

  it('conflict, constraint and anything else → the same error (500)', () => {
    for (const code of ['40001', '40P01', '23505', '42601', undefined]) {
      const error = Object.assign(new Error('x'), { code });
      expect(rethrown(error)).toBe(error);
    }
  });

  it('a StoreUnavailableError passes through unchanged', () => {
    const error = new StoreUnavailableError({ cause: new Error('x') });
    expect(rethrown(error)).toBe(error);
  });
});
