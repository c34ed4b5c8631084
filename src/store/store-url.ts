// DB_URL → which database, and that database's module. One line per database: its URL forms
// (src/store/<kind>/<kind>-config.ts: schemes, parser, what the URL parses to) and a loader of
// its module, which is imported only when a store of its kind opens, so SQLite never loads pg
// or mysql2. Adding a database is its folder and one line here.
import type { BookStoreDriver, DatabaseModule, DatabaseUrls, DriverOptions } from './driver.js';
import { mysqlUrls } from './mysql/mysql-config.js';
import { postgresUrls } from './postgres/postgres-config.js';
import { sqliteUrls } from './sqlite/sqlite-config.js';

const DATABASES = [
  database(sqliteUrls, async () => (await import('./sqlite/index.js')).sqlite),
  database(postgresUrls, async () => (await import('./postgres/index.js')).postgres),
  database(mysqlUrls, async () => (await import('./mysql/index.js')).mysql),
];

/** What DB_URL names: one of the databases' targets (`kind` says which). */
export type StoreConfig = ReturnType<(typeof DATABASES)[number]['parse']>;

interface Database<Target extends { kind: string }> extends DatabaseUrls<Target> {
  load(): Promise<DatabaseModule<Target>>;
}

/** A line of the table: the module must open what the URL parses to. */
function database<Target extends { kind: string }>(urls: DatabaseUrls<Target>, load: () => Promise<DatabaseModule<Target>>): Database<Target> {
  return { kind: urls.kind, schemes: urls.schemes, parse: urls.parse, load };
}

/** Loads the target's database module and opens it. */
export async function openDriver(target: StoreConfig, options: DriverOptions): Promise<BookStoreDriver> {
  // The line of the target's kind opens that kind's target (the compiler cannot follow the
  // kind from a union of lines to one of them).
  const line = DATABASES.find((candidate) => candidate.kind === target.kind) as Database<StoreConfig>;
  const module = await line.load();
  return module.open(target, options);
}

/** Every scheme as the unsupported-scheme message lists it: `sqlite:PATH, …, mysql://… or mariadb://…`. */
const SCHEME_FORMS = DATABASES.flatMap((line) => Object.values(line.schemes));
const SCHEME_LIST = `${SCHEME_FORMS.slice(0, -1).join(', ')} or ${SCHEME_FORMS.at(-1)}`;

/**
 * Maps DB_URL onto a store. Any scheme other than the documented ones refuses to start:
 * throws `Invalid` (config.ts passes its ConfigError) naming DB_URL.
 */
export function parseStoreUrl(dbUrl: string, cwd: string, Invalid: new (message: string) => Error = Error): StoreConfig {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(dbUrl)?.[1]?.toLowerCase();
  const line = scheme === undefined ? undefined : DATABASES.find((candidate) => Object.hasOwn(candidate.schemes, scheme));
  if (scheme === undefined || line === undefined) {
    // A bare path (`books.db`, `./data/books.db`) is the commonest slip: say what it would be.
    const path = scheme === undefined || /^[a-z]:[\\/]/i.test(dbUrl) ? `; for a SQLite file, write sqlite:${dbUrl}` : '';
    throw new Invalid(`DB_URL has an unsupported scheme "${scheme ?? dbUrl}": use ${SCHEME_LIST}${path}`);
  }
  return line.parse(dbUrl, { scheme, cwd, Invalid });
}

/** The store URL with its password replaced, for logs and error messages. */
export function describeStoreUrl(dbUrl: string): string {
  return dbUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*):[^@/]*@/i, '$1:***@');
}
