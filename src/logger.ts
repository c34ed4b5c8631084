// pino: JSON lines by default; human-readable only on a terminal, when pino-pretty is installed.
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
  'config.auth.verifyOnlySecrets',
  'auth.verifyOnlySecrets',
  'auth.secret',
];

/**
 * `destination`: where the lines go instead of stdout (tests give a sink). `stdout`: what writes
 * them to stdout when it is not a terminal (FastPaths.logDestination; pino's synchronous destination unless given).
 */
export function createLogger(level: string, destination?: NodeJS.WritableStream, stdout: () => DestinationStream = synchronousStdout): Logger {
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
  return pino(options, stdout());
}

const STDOUT = 1;

/**
 * pino's own destination on fd 1, synchronous: each line is written when it is logged, so none
 * is left in a buffer or a thread-pool write when the process exits, and lines keep their order.
 * `dest: 1`, not process.stdout: touching process.stdout makes a piped fd 1 non-blocking, and a
 * full pipe would then make sonic-boom sleep 100 ms with the event loop blocked, where a blocking
 * fd just waits for the reader.
 */
function synchronousStdout(): DestinationStream {
  return pino.destination({ dest: STDOUT, sync: true });
}

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
