// Whether the SQLite file's disk has room for writes, for readiness (GET /readyz). The disk is
// taken to be full when a write fails with SQLITE_FULL (answered 503, nothing written), or at
// the start when less than ROOM_BYTES are free (a store restarted on a full disk serves reads,
// but is not ready). It has room again once a write commits, or once ROOM_BYTES more are free
// than when it was found full (an operator freed space): readiness itself never writes.
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';

export const DISK_FULL = 'the disk the SQLite store is on is full: writes cannot commit';
/** How much free space counts as room for writes, and how much must be freed to count again. */
export const ROOM_BYTES = 2 ** 20;

export interface DiskFullWatch {
  /** Runs `write`, noting whether it committed or failed with SQLITE_FULL. */
  observe<T>(write: () => Promise<T>): Promise<T>;
  /** DISK_FULL while the disk is taken to be full; undefined otherwise. */
  unwritable(): string | undefined;
}

/** `file`: the store's file, or ':memory:' (never full). */
export function watchDiskFull(file: string): DiskFullWatch {
  const freeBytes = file === ':memory:' ? () => Infinity : () => freeBytesOn(dirname(file));
  /** The free space when the disk was found full; undefined while it has room. */
  let fullAt: number | undefined;
  const free = freeBytes();
  if (free < ROOM_BYTES) fullAt = free;
  const isDiskFull = (error: unknown) => (error as { code?: unknown } | undefined)?.code === 'SQLITE_FULL';
  return {
    async observe(write) {
      try {
        const result = await write();
        fullAt = undefined;
        return result;
      } catch (error) {
        if (isDiskFull(error)) fullAt = freeBytes();
        throw error;
      }
    },
    unwritable() {
      if (fullAt === undefined) return undefined;
      if (freeBytes() >= fullAt + ROOM_BYTES) fullAt = undefined;
      return fullAt === undefined ? undefined : DISK_FULL;
    },
  };
}

function freeBytesOn(dir: string): number {
  try {
    const { bavail, bsize } = statfsSync(dir);
    return bavail * bsize;
  } catch {
    return Infinity; // unknown: the next write will tell
  }
}
