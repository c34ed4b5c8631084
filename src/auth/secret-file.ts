// SECRET_TOKEN for the embedded store when none is set: 256 random bits, made once and kept in
// a file beside the SQLite file, readable by its owner only, so that `npm ci && npm start`
// serves at once and the tokens it signs stay valid across restarts. A server store (several
// instances must share one secret) never gets one made: its start asks for SECRET_TOKEN.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { makeDirectories } from '../make-directories.js';

const SECRET_BYTES = 32;

export interface KeptSecret {
  secret: string;
  file: string;
  /** Made by this start (false: read from an earlier one). */
  created: boolean;
}

/** The secret kept beside the SQLite file `dbFile` (`<dbFile>.secret`), made if there is none yet. */
export function secretBesideStore(dbFile: string): KeptSecret {
  const file = `${dbFile}.secret`;
  const kept = readKept(file);
  if (kept !== undefined) return { secret: kept, file, created: false };
  makeDirectories(dirname(file));
  // Written whole under another name, then linked into place: a process starting at the same
  // moment (a worker, a second instance) reads either no file or the whole secret, and link
  // fails for the one that comes second, which then reads the first one's.
  const secret = randomBytes(SECRET_BYTES).toString('base64url');
  const draft = `${file}.${process.pid}.tmp`;
  const fd = openSync(draft, 'w', 0o600);
  try {
    writeSync(fd, `${secret}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(draft, file);
    return { secret, file, created: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { secret: readKept(file)!, file, created: false };
  } finally {
    unlinkSync(draft);
  }
}

function readKept(file: string): string | undefined {
  try {
    const secret = readFileSync(file, 'utf8').trim();
    return secret === '' ? undefined : secret;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
