// Fresh stores for a run: a SQLite file in the temp dir, a fresh PostgreSQL database and a fresh
// MariaDB database (both dropped at cleanup). Each store can go back to its seeded books and be
// filled directly up to N books (bulk SQL while no server runs on it, so that the table's indexes
// and triggers are filled as for any write); a database server's store says how many connections
// it allows.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';
import { onCleanup } from './children.mjs';
import { log } from './log.mjs';
import { seedBook } from './seed.mjs';
import { MYSQL_ADMIN_URL, POSTGRES_ADMIN_URL, ROOT, UsageError } from './settings.mjs';

async function withPostgres(url, work) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3_000 });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function withMysql(url, work) {
  const { default: mysql } = await import('mysql2/promise');
  const connection = await mysql.createConnection({ uri: url, connectTimeout: 3_000 });
  try {
    return await work(connection);
  } finally {
    await connection.end().catch(() => undefined);
  }
}

function packageVersion(name) {
  try {
    return JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version;
  } catch {
    return '?';
  }
}

function redactUrl(url) {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return url;
  }
}

export async function createSqliteStore(tempDir, dirName = 'sqlite') {
  const dir = join(tempDir, dirName);
  mkdirSync(dir);
  const file = join(dir, 'books.db');
  const { default: Database } = await import('better-sqlite3');
  const withDb = (work) => {
    const db = new Database(file);
    try {
      db.pragma('busy_timeout = 10000');
      return work(db);
    } finally {
      db.close();
    }
  };
  return {
    kind: 'sqlite',
    label: 'SQLite',
    url: `sqlite:${file}`,
    description: `SQLite file in a temp dir (service defaults: WAL, synchronous=FULL); better-sqlite3 ${packageVersion('better-sqlite3')}`,
    async resetTo(maxId) {
      return withDb((db) => {
        db.prepare('delete from books where id > ?').run(maxId);
        return Number(db.prepare('select count(*) as n from books').pluck().get());
      });
    },
    /** Only while the service is stopped: one transaction, one prepared statement, up to `total` rows. */
    async fillTo(total, book = seedBook) {
      return withDb((db) => {
        const have = Number(db.prepare('select count(*) from books').pluck().get());
        const insert = db.prepare('insert into books (title, author, year) values (?, ?, ?)');
        db.transaction(() => {
          for (let i = have + 1; i <= total; i += 1) insert.run(...book(i));
        })();
        return Number(db.prepare('select count(*) from books').pluck().get());
      });
    },
    /** What the database does by itself after many writes: SQLite, nothing (statistics only on ANALYZE). */
    async catchUp() {},
    async drop() {},
  };
}

export async function createPostgresStore() {
  const name = `books_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const version = await withPostgres(POSTGRES_ADMIN_URL, async (client) => {
    const { rows } = await client.query('show server_version');
    await client.query(`create database ${name}`);
    return rows[0].server_version;
  });
  const adminUrl = new URL(POSTGRES_ADMIN_URL);
  adminUrl.pathname = `/${name}`;
  const url = adminUrl.toString();
  const store = {
    kind: 'postgres',
    label: 'PostgreSQL',
    url,
    database: name,
    description: `PostgreSQL ${version} on ${adminUrl.host} (a fresh database per run, dropped afterwards); pg ${packageVersion('pg')}`,
    async resetTo(maxId) {
      return withPostgres(url, async (client) => {
        await client.query('delete from books where id > $1', [maxId]);
        const { rows } = await client.query('select count(*)::int as n from books');
        return rows[0].n;
      });
    },
    /** The server's connection limit (less the superusers' reserve) and the connections open now. */
    async connections() {
      return withPostgres(url, async (client) => {
        const { rows } = await client.query(
          `select (select setting::int from pg_settings where name = 'max_connections')
                - (select setting::int from pg_settings where name = 'superuser_reserved_connections') as max,
                  (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as open`,
        );
        return { max: rows[0].max, open: rows[0].open };
      });
    },
    /** One transaction of `insert … select from unnest(…)`, POSTGRES_FILL_BATCH rows per statement. */
    async fillTo(total, book = seedBook) {
      return withPostgres(url, async (client) => {
        const { rows } = await client.query('select count(*)::int as n from books');
        await client.query('begin');
        for (let from = rows[0].n + 1; from <= total; from += POSTGRES_FILL_BATCH) {
          const columns = [[], [], []];
          for (let i = from; i <= Math.min(total, from + POSTGRES_FILL_BATCH - 1); i += 1) {
            book(i).forEach((value, column) => columns[column].push(value));
          }
          await client.query('insert into books (title, author, year) select * from unnest($1::text[], $2::text[], $3::int[])', columns);
        }
        await client.query('commit');
        const after = await client.query('select count(*)::int as n from books');
        return after.rows[0].n;
      });
    },
    /** What autovacuum does after that many writes (statistics, visibility map, GIN's pending list), now rather than within its next minute. */
    async catchUp() {
      await withPostgres(url, (client) => client.query('vacuum analyze books'));
    },
    async drop() {
      await withPostgres(POSTGRES_ADMIN_URL, async (client) => {
        try {
          await client.query(`drop database if exists ${name} with (force)`);
        } catch {
          // PostgreSQL < 13: no WITH (FORCE)
          await client.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1', [name]);
          await client.query(`drop database if exists ${name}`);
        }
      });
    },
  };
  onCleanup(() => store.drop());
  return store;
}

/** PostgreSQL rows per INSERT when filling (three arrays of this many values). */
const POSTGRES_FILL_BATCH = 10_000;
/** MySQL rows per INSERT when filling: one statement per batch, well under max_allowed_packet… */
const MYSQL_FILL_BATCH = 1_000;
/** …and per transaction: few commits, each small enough for InnoDB's undo log and FULLTEXT cache. */
const MYSQL_FILL_TRANSACTION = 100_000;

export async function createMysqlStore() {
  const name = `books_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  // The server without a database (TEST_MYSQL_URL may name the tests' one, which may not exist).
  const serverUrl = new URL(MYSQL_ADMIN_URL);
  serverUrl.pathname = '/';
  const version = await withMysql(serverUrl.toString(), async (connection) => {
    const [rows] = await connection.query('select version() as version');
    await connection.query(`create database ${name}`);
    return rows[0].version;
  });
  const adminUrl = new URL(serverUrl);
  adminUrl.pathname = `/${name}`;
  const url = adminUrl.toString();
  const store = {
    kind: 'mysql',
    label: 'MariaDB',
    url,
    database: name,
    description: `${/mariadb/i.test(version) ? 'MariaDB' : 'MySQL'} ${version} on ${adminUrl.host} (a fresh database per run, dropped afterwards); mysql2 ${packageVersion('mysql2')}`,
    async resetTo(maxId) {
      return withMysql(url, async (connection) => {
        await connection.query('delete from books where id > ?', [maxId]);
        const [rows] = await connection.query('select count(*) as n from books');
        return Number(rows[0].n);
      });
    },
    /** The server's connection limit and the connections open now. */
    async connections() {
      return withMysql(url, async (connection) => {
        const [rows] = await connection.query("select @@max_connections as max, (select variable_value from information_schema.global_status where variable_name = 'THREADS_CONNECTED') as open");
        return { max: Number(rows[0].max), open: Number(rows[0].open) };
      });
    },
    async fillTo(total, book = seedBook) {
      return withMysql(url, async (connection) => {
        const count = async () => Number((await connection.query('select count(*) as n from books'))[0][0].n);
        // The service's version column has a default (migration 002); Go/Gin's table has none.
        const first = (await count()) + 1;
        for (let from = first; from <= total; from += MYSQL_FILL_BATCH) {
          if ((from - first) % MYSQL_FILL_TRANSACTION === 0) await connection.query('begin');
          const rows = [];
          for (let i = from; i <= Math.min(total, from + MYSQL_FILL_BATCH - 1); i += 1) rows.push(book(i));
          await connection.query('insert into books (title, author, year) values ?', [rows]);
          const next = from + MYSQL_FILL_BATCH;
          if (next > total || (next - first) % MYSQL_FILL_TRANSACTION === 0) await connection.query('commit');
        }
        return count();
      });
    },
    /** What InnoDB does in the background once a tenth of a table changed (its statistics), now. */
    async catchUp() {
      await withMysql(url, (connection) => connection.query('analyze table books'));
    },
    async drop() {
      await withMysql(serverUrl.toString(), (connection) => connection.query(`drop database if exists ${name}`));
    },
  };
  onCleanup(() => store.drop());
  return store;
}

/**
 * The stores of the kinds wanted (BENCH_STORES); PostgreSQL and MariaDB are skipped, with the
 * reason, when their server is not reachable. Returns { stores, skipped: { kind: reason } }.
 */
export async function openStores(wanted, tempDir) {
  const stores = [];
  const skipped = {};
  if (wanted.includes('sqlite')) stores.push(await createSqliteStore(tempDir));
  if (wanted.includes('postgres')) {
    try {
      stores.push(await createPostgresStore());
    } catch (error) {
      skipped.postgres = `not reachable at ${redactUrl(POSTGRES_ADMIN_URL)} (TEST_POSTGRES_URL): ${error.message}`;
      log(`bench: PostgreSQL skipped: ${skipped.postgres}`);
    }
  }
  if (wanted.includes('mysql')) {
    try {
      stores.push(await createMysqlStore());
    } catch (error) {
      skipped.mysql = `not reachable at ${redactUrl(MYSQL_ADMIN_URL)} (TEST_MYSQL_URL): ${error.message}`;
      log(`bench: MariaDB skipped: ${skipped.mysql}`);
    }
  }
  if (stores.length === 0) throw new UsageError(`no store to benchmark (BENCH_STORES=${wanted.join(',')})`);
  return { stores, skipped };
}
