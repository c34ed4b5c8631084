// The machine the run is on, as the report describes it: CPU, cores, memory, OS, Node, load
// average at start, load generator.
import { readFileSync } from 'node:fs';
import os from 'node:os';
import process from 'node:process';

export function describeMachine(tool) {
  return {
    cpu: /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1]?.trim() ?? os.cpus()[0]?.model ?? '?',
    cores: os.availableParallelism?.() ?? os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadAverageAtStart: os.loadavg().map((n) => Math.round(n * 100) / 100),
    loadGenerator: tool.version,
  };
}
