// Memory of a server under test: its peak (VmHWM from /proc/<pid>/status, over its process
// tree), and what one process holds now (VmRSS).
import { readFileSync, readdirSync } from 'node:fs';

function descendants(pid) {
  const found = [];
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    let children;
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of children.split(' ').filter(Boolean).map(Number)) found.push(child, ...descendants(child));
  }
  return found;
}

/**
 * Peak RSS (VmHWM) of the service process; should it have forked (WORKERS > 1), the peaks of
 * its descendants are added, an upper bound of the peak of the whole tree; `largestProcessMiB` is
 * the largest single process's peak.
 */
export function readPeakRss(pid) {
  let kib = 0;
  let largestKib = 0;
  let processes = 0;
  for (const each of [pid, ...descendants(pid)]) {
    try {
      const status = readFileSync(`/proc/${each}/status`, 'utf8');
      const own = Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
      kib += own;
      largestKib = Math.max(largestKib, own);
      processes += 1;
    } catch {
      // gone meanwhile
    }
  }
  return { peakRssMiB: processes ? kib / 1024 : null, largestProcessMiB: processes ? largestKib / 1024 : null, processes };
}

/** What one process holds now (VmRSS), in MiB; null once it is gone. */
export function readRss(pid) {
  try {
    const kib = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kib === undefined ? null : Number(kib) / 1024;
  } catch {
    return null;
  }
}
