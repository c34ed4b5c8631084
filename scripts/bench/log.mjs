// The bench's progress and failure lines, on stderr (stdout carries only the final tables).
import process from 'node:process';

export function log(message) {
  process.stderr.write(`${message}\n`);
}
