// The room of the speed paths: each file or folder here is one path, layered on the plain
// service through a seam the plain code owns (src/seams.ts), and documented once, in its own
// header, with the measurement that justifies it (docs/benchmarks.md, "What each speed path
// buys"). The plain code never imports this folder: src/main.ts hands the serve command
// loadFastPaths, which is called only when FAST_PATHS turns a path on.
import type { FastPathName, FastPaths } from '../seams.js';
import { answerInTurns } from './answer-in-turns.js';
import { batchedStdout } from './batched-log.js';
import { shareQueries } from './batched-queries/index.js';
import { bulkLists } from './bulk-lists/index.js';
import { countedRequestMetrics } from './counted-metrics.js';
import { groupCommit } from './group-commit.js';
import { sizeHeap } from './heap-sizing.js';
import lazyApiReference from './lazy-api-reference.js';
import { oneReadBodyParser } from './one-read-body.js';
import { precompiledCompilers } from './precompiled-schemas.js';
import { SharedListAnswers } from './shared-lists.js';
import { verifiedTokenCache } from './token-cache.js';

/** The layers of the paths named in `names` (FAST_PATHS). */
export async function loadFastPaths(names: ReadonlySet<FastPathName>): Promise<FastPaths> {
  const on = (name: FastPathName) => names.has(name);
  return {
    sizeHeap: on('heap-sizing') ? sizeHeap : undefined,
    requestListener: on('answer-in-turns') ? (handler) => answerInTurns(handler) : undefined,
    bookLists: on('shared-lists') ? (store, tracing) => new SharedListAnswers(store, tracing) : undefined,
    logDestination: on('batched-log') ? batchedStdout : undefined,
    requestMetrics: on('counted-metrics') ? countedRequestMetrics : undefined,
    verifiedTokens: on('token-cache') ? verifiedTokenCache : undefined,
    jsonBodyParser: on('one-read-body') ? oneReadBodyParser : undefined,
    shareQueries: on('batched-queries') ? (tracing) => ({ around: (store, driver) => shareQueries(store, driver, tracing) }) : undefined,
    groupCommit: on('group-commit') ? groupCommit : undefined,
    bulkLists: on('bulk-lists') ? bulkLists : undefined,
    schemaCompilers: on('precompiled-schemas') ? () => precompiledCompilers() : undefined,
    apiReference: on('lazy-api-reference') ? lazyApiReference : undefined,
  };
}
