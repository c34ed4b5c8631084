// Batched log output (the speed path batched-log): the lines of one event-loop turn go to stdout
// together, and a slow reader never stalls the event loop. Plugged in through
// FastPaths.logDestination (src/seams.ts), where it stands in for the plain logger's stdout,
// pino's synchronous destination (src/logger.ts); a terminal with pino-pretty keeps pino-pretty.
//
// Why together: one write for dozens of request lines under load, and each line at once when
// idle. Per line: 0.3 µs, against 1.7 µs for a write per line (pino's synchronous destination)
// and 2.7 µs for pino's asynchronous 4 KiB buffering, a thread-pool round trip per write
// (docs/benchmarks-changes.md, "Smaller measurements behind the code").
//
// Why never blocking: when stdout is a pipe or socket (containers, systemd, a supervisor reading
// it), fd 1 is non-blocking as soon as anything in the process touches process.stdout, and a full
// pipe answers a write with EAGAIN. pino's synchronous destination (sonic-boom) then sleeps
// 100 ms with the event loop blocked and tries again: every request in flight waited 100 ms or
// more whenever the log reader fell behind for a moment. Here the rest of the batch is kept and
// written again a millisecond later while requests go on being served; only past 16 MiB
// unwritten does writing wait for the reader, 1 ms at a time. At exit everything left is
// written, waiting as needed. Measured with a reader pausing 150 ms every 500 ms: event-loop
// delay max 113–583 ms in steps of ~100 ms → no 100 ms steps; wrk p99 226.6 → 163.4 ms
// (docs/benchmarks-changes.md, the row "Log output never blocks the event loop").
import { writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

/** A batch is written as soon as it reaches this size, without waiting for the end of the turn. */
const MAX_BATCH_CHARS = 64 * 1024;
const STDOUT = 1;
/** While stdout cannot take more (EAGAIN), the rest of a batch is retried this often. */
const RETRY_MS = 1;
/** Past this much unwritten output, writing waits for stdout (backpressure) instead of gathering more. */
const MAX_UNWRITTEN_BYTES = 16 * 1024 * 1024;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** The service's stdout as a batched destination (FastPaths.logDestination). */
export function batchedStdout(): DestinationStream {
  return new BatchedDestination(STDOUT);
}

/**
 * Lines logged during one turn of the event loop go out together in one write at the end of
 * the turn (setImmediate), or as soon as 64 KiB have gathered. What the fd does not take now
 * (EAGAIN) is kept and written again RETRY_MS later (see the top of this file).
 */
export class BatchedDestination implements DestinationStream {
  private pending = '';
  private scheduled = false;
  /** Bytes of earlier batches the fd has not taken yet (EAGAIN), oldest first. */
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

  /** Writes what the fd did not take; `wait`: until all of it is written (exit, backpressure). */
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

  /** Bytes written, or -1 when the fd takes nothing now (EAGAIN). Other errors lose the batch, as before. */
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
