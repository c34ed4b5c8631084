// The page's section on library scale (library-scale.mjs): its tables (library-tables.mjs) and
// how they were measured.
import { mdTable } from './format.mjs';
import { LIBRARY_QUERIES } from './library-books.mjs';
import { LIBRARY_TARGETS, fillTable, fmtBooks, fullListTable, libraryTable, libraryTargetTable } from './library-tables.mjs';
import {
  LIBRARY_DEEP_SHARE,
  LIBRARY_LIST_MIN_DURATION_S,
  LIBRARY_LIST_SAMPLES,
  LIBRARY_LIST_TIMEOUT_S,
  LIBRARY_TIMEOUT_S,
  LIBRARY_WALK_PAGE,
} from './settings.mjs';

export const LIBRARY_HEADING = 'Library scale: GET /books with limit, sort, q and cursor';

export function librarySection(report) {
  const library = report.libraryScale;
  const heading = `## ${LIBRARY_HEADING}`;
  if (!library || library.skipped) {
    return `${heading}

Not measured in this run${library?.skipped ? ` (${library.skipped})` : ''}: \`BENCH_LIBRARY_SIZES\` (10000,100000,1000000 by default) runs it.
`;
  }
  const sizes = library.sizes.map((n) => n.toLocaleString('en-US')).join(', ');
  const [small, large] = [fmtBooks(library.sizes[0]), fmtBooks(library.sizes.at(-1))];
  const t = LIBRARY_TARGETS;
  const { settings } = report;
  // How many books the searches matched at the smallest and the largest size (the same on every store).
  const matched = (n) => {
    const counts = Object.values(library.stores).find((store) => store.sizes.some((size) => size.matches))?.sizes.find((size) => size.books === n)?.matches;
    return counts ? `${Math.min(...counts).toLocaleString('en-US')} to ${Math.max(...counts).toLocaleString('en-US')}` : 'some';
  };
  return `${heading}

${mdTable(...libraryTargetTable(library))}

${mdTable(...libraryTable(library))}

GET /books without parameters at ${library.sizes.at(-1).toLocaleString('en-US')} books, the service against the Go/Gin reference:

${mdTable(...fullListTable(library))}

How long each store took to build (seconds, and rows per second of the fill):

${mdTable(...fillTable(library))}

How: for each kind of store, a fresh one (SQLite file, PostgreSQL or MariaDB database) is migrated empty by the
service (\`node dist/main.js migrate\`), then grown to ${sizes} books in turn, never refilled, by bulk SQL while no
server runs on it: SQLite one transaction of one prepared statement (better-sqlite3), PostgreSQL one transaction of
\`INSERT … SELECT FROM unnest($1, $2, $3)\` with 10,000 rows per statement, MariaDB multi-row \`INSERT\`s of 1,000
rows in transactions of 100,000. The service's sort indexes, SQLite's FTS5 table (its triggers), PostgreSQL's GIN
index and MariaDB's generated column and FULLTEXT index are thus filled by the database as for any write. After each
fill the store catches up as it would by itself soon after that many writes: PostgreSQL \`VACUUM ANALYZE books\`
(what autovacuum does within its next minute: statistics, from which the first page's \`X-Total-Count-Estimate\`
comes, and GIN's pending list merged), MariaDB \`ANALYZE TABLE books\` (InnoDB's statistics, recalculated in the
background once a tenth of a table changed), SQLite nothing (it keeps statistics only when told to). Books: a title
of three words (~19 characters) and an author of a first name and a surname (~14) from word lists, picked by a hash
of the book's number, and a year from 1500 to 2025 (scripts/bench/library-books.mjs), the same on every store.

At each size a fresh service process (pinned to CPU 1, wrk to CPU 0, as the per-core half; ${library.connections}
clients, wrk's timeout ${LIBRARY_TIMEOUT_S} s) serves each request for ${settings.durationS} s after a ${settings.warmupS} s warm-up, ${library.rounds} round(s)
round-robin, medians reported: the first page of ${library.page} by each sort (with its \`X-Total-Count\`, or
PostgreSQL's and MariaDB's estimate), a search of ${LIBRARY_QUERIES.length} two-term queries in turn (a title word
and a surname: ${LIBRARY_QUERIES.map((q) => `\`${q}\``).join(', ')}; each matches ${matched(library.sizes[0])} books at ${small}
and ${matched(library.sizes.at(-1))} at ${large}), and for each sort the page of ${library.page} after ${Math.round(LIBRARY_DEEP_SHARE * 100)} % of the
books. Its cursor is found as a client would: pages of ${LIBRARY_WALK_PAGE.toLocaleString('en-US')} from the first, following each
\`Link: <…>; rel="next"\`, the order checked across pages. Before the load, one answer of each request is checked:
its length, order and \`X-Total-Count\` (the search's against the books that match by the contract's rule).
**${large} ÷ ${small}** is a request's req/s at ${large} books divided by its req/s at ${small} (wanted ≥ ${t.scale}×: the list
does not slow down as the collection grows); **deep ÷ first page** a deep page's req/s divided by the first page's
of the same sort at ${large} (wanted ≥ ${t.deep}×: no slower than 20 % below; the first page also counts the books);
p99 wanted ≤ ${t.p99Ms} ms at each size.

GET /books without parameters streams every book: at ${large} a fresh service process, then a fresh Go/Gin process on
its own fresh store of the same kind, grown to the same books, each timed ${LIBRARY_LIST_SAMPLES} times one request
at a time (from sending the request to its last byte; the first answer's books counted), then ${library.listConnections} clients
for ${Math.max(settings.durationS, LIBRARY_LIST_MIN_DURATION_S)} s (wrk's timeout ${LIBRARY_LIST_TIMEOUT_S} s), and
its peak RSS (\`VmHWM\`) read; wanted: peak RSS ≤ ${t.peakRssMiB} MiB, and one request at least ${t.fasterThanGoGin}× faster
than Go/Gin's. \`BENCH_LIBRARY_SIZES\` sets the sizes (0 skips the phase), \`BENCH_LIBRARY_ROUNDS\` the rounds. This phase
took ${library.seconds} s.
`;
}
