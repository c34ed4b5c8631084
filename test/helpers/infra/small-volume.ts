// A small file system of the test's own (a tmpfs of a few MiB), to fill a disk for real.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SmallVolume {
  dir: string;
  /** Unmounts it and removes the mount point. */
  remove(): void;
}

export function mountSmallVolume(sizeMiB: number): SmallVolume {
  const dir = mkdtempSync(join(tmpdir(), 'books-volume-'));
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (mounted.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount -t tmpfs failed: ${mounted.stderr.trim()}`);
  }
  return {
    dir,
    remove() {
      spawnSync('umount', ['-l', dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let checked: string | undefined | null = null;

/** Undefined when a tmpfs can be mounted here, else why not (asked once). */
export function smallVolumeMissing(): string | undefined {
  if (checked !== null) return checked;
  try {
    mountSmallVolume(1).remove();
    checked = undefined;
  } catch (error) {
    checked = `a small volume of the test's own (run as root): ${(error as Error).message}`;
  }
  return checked;
}
