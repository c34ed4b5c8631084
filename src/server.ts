// One serving process: open the store, build the app, listen; and the one way to stop it
// (drain in-flight requests, then close the store). The entry point and the tests both use it.
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import type { LoginLimiter } from './auth/login-limiter.js';
import type { Config, HttpSettings } from './config.js';
import type { App } from './http/types.js';
import { NO_FAST_PATHS, type FastPaths } from './seams.js';
import type { BookStore } from './store/book-store.js';
import { openStore } from './store/open-store.js';
import { StartupError } from './startup-error.js';
import { startTracing } from './tracing/start-tracing.js';
import type { Tracing } from './tracing/tracing.js';

/** The longest a graceful stop may take before the process gives up waiting. */
export const SHUTDOWN_GRACE_MS = 10_000;
/** Within that: the longest the spans still queued may take to be exported once the rest has stopped. */
export const TRACE_FLUSH_MS = 3_000;
/** Within that: what closing the store is given once the requests are done. */
const STORE_CLOSE_MS = 1_000;
/**
 * Requests still in flight this long after the stop began are cut (their connections closed),
 * so that closing the store and exporting the last spans keep their share of the grace period.
 */
export const DRAIN_MS = SHUTDOWN_GRACE_MS - STORE_CLOSE_MS - TRACE_FLUSH_MS;

export interface RunningServer {
  app: App;
  store: BookStore;
  /** OpenTelemetry tracing, or NO_TRACING (src/tracing/tracing.ts). */
  tracing: Tracing;
  /** `http://host:port` as bound (the real port when PORT=0). */
  url: string;
  /** Stops accepting, lets in-flight requests finish, closes the store, exports the last spans. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartOptions {
  /** The failed-login limiter; one for this process unless given (cluster workers share one). */
  loginLimiter?: LoginLimiter;
  /** The speed paths that are on (src/seams.ts); none unless given. */
  fastPaths?: FastPaths;
}

export async function startServer(config: Readonly<Config>, logger: Logger, options: StartOptions = {}): Promise<RunningServer> {
  // Off (no OTEL_* variable sets it up): NO_TRACING, and nothing of OpenTelemetry is loaded.
  const tracing = await startTracing(config.tracing, logger);
  const fastPaths = options.fastPaths ?? NO_FAST_PATHS;
  let store: BookStore;
  try {
    store = await openStore(config.store, logger, {
      // The store's queries made for a request become spans of its trace.
      wrapDriver: (driver) => tracing.traceDriver(driver),
      // Innermost first: group commit's keyed creates, then the queries shared around them,
      // then the whole list in large chunks.
      layers: [fastPaths.groupCommit?.(), fastPaths.shareQueries?.(tracing), fastPaths.bulkLists?.()],
    });
  } catch (error) {
    await tracing.shutdown(TRACE_FLUSH_MS);
    throw error;
  }
  let app: App;
  try {
    app = await buildApp({ config, store, logger, loginLimiter: options.loginLimiter, tracing, fastPaths });
  } catch (error) {
    await store.close().catch(() => undefined);
    await tracing.shutdown(TRACE_FLUSH_MS);
    throw error;
  }
  try {
    await app.listen({ port: config.http.port, host: config.http.host });
  } catch (error) {
    await app.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    await tracing.shutdown(TRACE_FLUSH_MS);
    throw new StartupError(describeListenFailure(error, config.http), { cause: error });
  }
  const address = app.server.address();
  const url = typeof address === 'object' && address !== null ? `http://${formatHost(address.address)}:${address.port}` : String(address);

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      // Node stops enforcing REQUEST_TIMEOUT once the server is closing: cut connections that
      // still have not finished their request by DRAIN_MS (it was 9 s, which left the last
      // spans about 1 s of their 3).
      const cutStalled = setTimeout(() => app.server.closeAllConnections(), Math.min(config.http.requestTimeoutMs, DRAIN_MS));
      cutStalled.unref();
      try {
        await app.close(); // stops accepting, waits for in-flight requests
        await store.close();
      } finally {
        clearTimeout(cutStalled);
        // The spans of the last requests, still queued: exported now, within TRACE_FLUSH_MS.
        await tracing.shutdown(TRACE_FLUSH_MS);
      }
    })();
    return stopping;
  };
  return { app, store, tracing, url, stop };
}

function formatHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address;
}

/** Why the server could not listen, naming the setting to fix. */
function describeListenFailure(error: unknown, { host, port }: Readonly<HttpSettings>): string {
  const { code, message } = error as NodeJS.ErrnoException;
  switch (code) {
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return `HOST "${host}" does not resolve to an address of this machine (${code})`;
    case 'EADDRNOTAVAIL':
      return `HOST "${host}" is not an address of this machine (${code})`;
    case 'EADDRINUSE':
      return `PORT ${port} is already in use on ${host} (${code})`;
    case 'EACCES':
      return `no permission to listen on PORT ${port} (${code}): ports below 1024 need privileges`;
    default:
      return `cannot listen on ${host}:${port} (PORT, HOST): ${code ?? message}`;
  }
}
