// pino: JSON lines by default; human-readable only on a terminal, when pino-pretty is installed.
import { createRequire } from 'node:module';
import { pino, type Logger, type LoggerOptions } from 'pino';

/** Never log credentials, tokens or the signing secret, wherever they appear. */
const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'password',
  '*.password',
  'token',
  '*.token',
  'secret',
  '*.secret',
];

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
  // Asynchronous writes: under load, lines written while a write is in flight are batched
  // into one syscall instead of one per request. main.ts flushes before exiting.
  return pino(options, pino.destination({ dest: 1, sync: false }));
}

function prettyAvailable(): boolean {
  try {
    createRequire(import.meta.url).resolve('pino-pretty');
    return true;
  } catch {
    return false;
  }
}
