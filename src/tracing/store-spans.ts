// The store's queries as spans: a BookStoreDriver around the real one, with a span for each
// operation it runs for a request (work-spans.ts finds the request, or the several requests a
// batched query serves). The driver is the level where one call is one statement (or one
// transaction, whose statements are its children), below any layer that batches (a speed
// path's, src/fast/), so a query shared by requests that arrive together is one call made in
// their names. Such a layer's own statements are sent with `runRead`, `runWrite` or a
// transaction's `run`, so they are named from their text like every other statement.
//
// What a span says: the database (`db.system.name`, and the older `db.system`), the operation
// and table (`db.operation.name`, `db.collection.name`, e.g. `SELECT books`), the node that
// answered (`server.address`, `server.port`, from DB_URL's host list, never its credentials).
// Never the SQL text, its parameters or any value read or written.
import type { Attributes, Span } from '@opentelemetry/api';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_SYSTEM_NAME,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
} from '@opentelemetry/semantic-conventions';
import type { BookOperations, BookStoreDriver, TransactionScope } from '../store/driver.js';
import type { RunQuery } from '../store/books-table.js';
import type { RunOptions, WorkSpans } from './work-spans.js';

/** The attribute db.system.name replaced; many backends still read it. */
const ATTR_DB_SYSTEM = 'db.system';

/**
 * Statement texts seen by `runWrite`/`runRead`, and what they are (a fixed set: the code's own;
 * MySQL's batch statements have one text per number of rows, up to 64 each).
 */
const MAX_DESCRIBED_TEXTS = 512;

interface Operation {
  name: string;
  collection: string | undefined;
}

export function traceDriver(driver: BookStoreDriver, spans: WorkSpans): BookStoreDriver {
  const nodes = new NodeAttributes(driver);
  const described = new Map<string, Operation>();
  /** Each operation's span name and attributes, made once per database (a MySQL URL's nodes may be MySQL and MariaDB). */
  const made = new WeakMap<Operation, { system: string; spanName: string; attributes: Attributes }>();
  const options = { atEnd: nodes.inUse };
  const withChildren = { atEnd: nodes.inUse, parentOfMore: true };

  /** Runs `work` as the span of `operation`, under `parents` (the requests being recorded that wait for it). */
  const inSpan = <T>(parents: readonly Span[], operation: Operation, work: () => Promise<T>, runOptions: RunOptions = options): Promise<T> => {
    const system = driver.databaseSystem();
    let span = made.get(operation);
    if (span?.system !== system) {
      const { name, collection } = operation;
      const attributes: Attributes = { [ATTR_DB_SYSTEM_NAME]: system, [ATTR_DB_SYSTEM]: system, [ATTR_DB_OPERATION_NAME]: name };
      if (collection !== undefined) attributes[ATTR_DB_COLLECTION_NAME] = collection;
      span = { system, spanName: collection === undefined ? name : `${name} ${collection}`, attributes };
      made.set(operation, span);
    }
    return spans.runUnder(parents, span.spanName, span.attributes, work, runOptions);
  };
  // Each asks first whether a request being recorded waits for it: when none does (tracing
  // off for this request: not sampled, or outside any request), the call is made as it is.
  const traced =
    <A extends unknown[], R>(operation: Operation, method: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      const parents = spans.recordingParents();
      return parents.length === 0 ? method(...args) : inSpan(parents, operation, () => method(...args));
    };
  /** A statement run as it is: what it is, from its own text (its first keyword and table). */
  const tracedRun =
    (run: RunQuery): RunQuery =>
    (query) => {
      const parents = spans.recordingParents();
      if (parents.length === 0) return run(query);
      let operation = described.get(query.sql);
      if (operation === undefined) {
        operation = describeStatement(query.sql);
        if (described.size < MAX_DESCRIBED_TEXTS) described.set(query.sql, operation);
      }
      return inSpan(parents, operation, () => run(query));
    };
  const bookOperations = (ops: BookOperations): BookOperations => ({
    selectBook: traced(SELECT_BOOKS, ops.selectBook),
    insertBook: traced(INSERT_BOOKS, ops.insertBook),
    updateBook: traced(UPDATE_BOOKS, ops.updateBook),
    deleteBook: traced(DELETE_BOOKS, ops.deleteBook),
  });
  const scope = (tx: TransactionScope): TransactionScope => ({ ...bookOperations(tx), run: tracedRun(tx.run) });

  return {
    ...driver,
    ...bookOperations(driver),
    selectPage: traced(SELECT_BOOKS, driver.selectPage),
    selectBooks: traced(SELECT_BOOKS, driver.selectBooks),
    transaction(work) {
      const parents = spans.recordingParents();
      if (parents.length === 0) return driver.transaction(work);
      return inSpan(parents, TRANSACTION, () => driver.transaction((tx) => work(scope(tx))), withChildren);
    },
    runWrite: tracedRun(driver.runWrite),
    runRead: tracedRun(driver.runRead),
  };
}

const SELECT_BOOKS: Operation = { name: 'SELECT', collection: 'books' };
const INSERT_BOOKS: Operation = { name: 'INSERT', collection: 'books' };
const UPDATE_BOOKS: Operation = { name: 'UPDATE', collection: 'books' };
const DELETE_BOOKS: Operation = { name: 'DELETE', collection: 'books' };
/** A transaction: BEGIN, its statements (child spans), COMMIT. */
const TRANSACTION: Operation = { name: 'TRANSACTION', collection: undefined };

/** A statement's first keyword and the first table it names: `DELETE idempotency_keys`. */
export function describeStatement(sql: string): Operation {
  const name = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
  const collection = /\b(?:from|into|update)\s+[`"]?(\w+)/i.exec(sql)?.[1];
  return { name, collection };
}

/** `server.address` and `server.port` of the node in use (none for SQLite), parsed once per node. */
class NodeAttributes {
  private readonly parsed = new Map<string, Attributes>();

  constructor(private readonly driver: BookStoreDriver) {}

  readonly inUse = (): Attributes | undefined => {
    const name = this.driver.nodeUse()?.inUse;
    if (name === undefined) return undefined;
    let attributes = this.parsed.get(name);
    if (attributes === undefined) {
      // `host:port`, `[v6 address]:port` (src/store/nodes.ts).
      const colon = name.lastIndexOf(':');
      attributes = { [ATTR_SERVER_ADDRESS]: name.slice(0, colon).replace(/^\[(.*)\]$/, '$1'), [ATTR_SERVER_PORT]: Number(name.slice(colon + 1)) };
      this.parsed.set(name, attributes);
    }
    return attributes;
  };
}
