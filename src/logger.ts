// pino: JSON lines by default; human-readable only on a terminal, when pino-pretty is installed.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isatty } from 'node:tty';
import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';

/**
 * Never log credentials, tokens or the signing secret. The service never logs bodies or
 * headers; these paths guard the objects it could log by mistake. Explicit paths only: with
 * wildcards, redaction made every log line markedly dearer (docs/benchmarks-changes.md).
 */
const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  'body.password',
  'req.body.password',
  'token',
  'data.token',
  'secret',
  'config.auth.secret',
  'auth.secret',
];

/** A batch is written as soon as it reaches this size, without waiting for the end of the turn. */
const MAX_BATCH_CHARS = 64 * 1024;

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(options, destination as pino.DestinationStream);
  // isatty(1), not process.stdout.isTTY: creating process.stdout on a pipe makes fd 1 non-blocking.
  if (isatty(STDOUT) && prettyAvailable()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  return pino(options, new BatchedDestination(STDOUT));
}

const STDOUT = 1;
/** While stdout cannot take more (EAGAIN), the rest of a batch is retried this often. */
const RETRY_MS = 1;
/** Past this much unwritten output, writing waits for stdout (backpressure) instead of gathering more. */
const MAX_UNWRITTEN_BYTES = 16 * 1024 * 1024;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Lines logged during one turn of the event loop go out together in one write at the end of
 * the turn (setImmediate), or as soon as 64 KiB have gathered. Under load that is one write
 * for dozens of request lines; when idle, each line goes out at once. Cheaper per line than
 * pino's asynchronous buffering (a thread-pool round trip per write) or a write per line
 * (measured: docs/benchmarks-changes.md).
 *
 * Never stalls the event loop on a slow reader. When stdout is a pipe or socket (containers,
 * systemd, a supervisor reading it), fd 1 is non-blocking as soon as anything in the process
 * touches process.stdout, and a full pipe answers a write with EAGAIN. pino's synchronous
 * destination (sonic-boom) then sleeps 100 ms with the event loop blocked and tries again: every
 * request in flight waited 100 ms or more whenever the log reader fell behind for a moment
 * (the p99/max latency stalls of issue 13). Here the rest of the batch is kept and written again
 * a millisecond later while requests go on being served; only past 16 MiB unwritten does writing
 * wait for the reader, 1 ms at a time. At exit everything left is written, waiting as needed.
 */
class BatchedDestination implements DestinationStream {
  private pending = '';
  private scheduled = false;
  /** Bytes of earlier batches stdout has not taken yet (EAGAIN), oldest first. */
  private unwritten: Buffer[] = [];
  private unwrittenBytes = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly writeSoon = () => this.flush();
  private readonly retry = () => {
    this.retryTimer = undefined;
    this.drain(false);
  };

  constructor(private readonly fd: number) {
    // Whatever is still gathered when the process exits goes out first.
    process.once('exit', () => {
      this.flush();
      this.drain(true);
    });
  }

  write(line: string): void {
    this.pending += line;
    if (this.pending.length >= MAX_BATCH_CHARS) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.writeSoon);
    }
  }

  /** Called by logger.flush() (shutdown paths) and at the end of every turn with lines. */
  flush(callback?: (error?: Error) => void): void {
    this.scheduled = false;
    if (this.pending !== '') {
      const batch = this.pending;
      this.pending = '';
      if (this.unwrittenBytes === 0) {
        const written = this.writeSome(batch);
        if (written < 0) this.keep(Buffer.from(batch));
        else if (written < Buffer.byteLength(batch)) this.keep(Buffer.from(batch).subarray(written));
      } else {
        this.keep(Buffer.from(batch));
      }
      if (this.unwrittenBytes > MAX_UNWRITTEN_BYTES) this.drain(true);
    }
    callback?.();
  }

  private keep(bytes: Buffer): void {
    this.unwritten.push(bytes);
    this.unwrittenBytes += bytes.length;
    this.retryTimer ??= setTimeout(this.retry, RETRY_MS);
  }

  /** Writes what stdout did not take; `wait`: until all of it is written (exit, backpressure). */
  private drain(wait: boolean): void {
    while (this.unwritten.length > 0) {
      const head = this.unwritten[0] as Buffer;
      const written = this.writeSome(head);
      if (written < 0) {
        if (!wait) break;
        Atomics.wait(sleeper, 0, 0, RETRY_MS);
        continue;
      }
      this.unwrittenBytes -= written;
      if (written < head.length) this.unwritten[0] = head.subarray(written);
      else this.unwritten.shift();
    }
    if (this.unwritten.length > 0) this.retryTimer ??= setTimeout(this.retry, RETRY_MS);
    else if (this.retryTimer !== undefined) {
      clearTimeout(this.retryTimer);
      this.retryTimer = undefined;
    }
  }

  /** Bytes written, or -1 when stdout takes nothing now (EAGAIN). Other errors lose the batch, as before. */
  private writeSome(data: string | Buffer): number {
    try {
      return typeof data === 'string' ? writeSync(this.fd, data, null, 'utf8') : writeSync(this.fd, data);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EAGAIN' || code === 'EWOULDBLOCK' || code === 'EBUSY') return -1;
      return typeof data === 'string' ? Buffer.byteLength(data) : data.length;
    }
  }
}

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
