// The register linearizability checker (test/helpers/linearizability/checker.ts) on hand-made
// histories whose verdict is known, and on large generated ones (for speed).
import { describe, expect, it } from 'vitest';
import { checkRegisterHistory, type OpOutcome, type RegisterOp } from '../helpers/linearizability/checker.js';

const INITIAL = new Map([['book', 'v0']]);

function write(process: number, value: string, invokedAt: number, completedAt: number, outcome: OpOutcome = 'ok'): RegisterOp {
  return { process, key: 'book', kind: 'write', value, invokedAt, completedAt, outcome };
}

function read(process: number, value: string | null, invokedAt: number, completedAt: number, outcome: OpOutcome = 'ok'): RegisterOp {
  return { process, key: 'book', kind: 'read', value, invokedAt, completedAt, outcome };
}

const check = (history: RegisterOp[], initial: ReadonlyMap<string, string | null> = INITIAL) => checkRegisterHistory(history, initial, { origin: 0 });

describe('hand-made histories', () => {
  it('a valid concurrent history: overlapping writes and reads that see either order', () => {
    const result = check([
      write(1, 'a', 0, 10),
      write(2, 'b', 2, 12),
      // Both writes overlap these reads: b then a, or a then b, must be chosen consistently.
      read(3, 'b', 3, 5),
      read(4, 'a', 6, 11),
      read(3, 'a', 13, 14),
      write(1, 'c', 15, 20),
      read(2, 'a', 16, 17),
      read(4, 'c', 18, 19),
      read(2, 'c', 21, 22),
    ]);
    expect(result.report).toBe('');
    expect(result.linearizable).toBe(true);
  });

  it('a valid history whose only linearization puts the write nobody read first (the search must try another order)', () => {
    // x must take effect before it returns at 50, and a read after 60 still sees a: so x, then a.
    const result = check([write(1, 'x', 0, 50), write(2, 'a', 0, 100), read(3, 'a', 10, 20), read(3, 'a', 60, 70)]);
    expect(result.report).toBe('');
    expect(result.linearizable).toBe(true);
  });

  it('the initial value read before any write completes, and an absent book read on a key with no initial value', () => {
    const result = check(
      [read(1, 'v0', 0, 1), write(2, 'a', 0.5, 3), read(1, 'v0', 2, 2.5), read(3, 'a', 4, 5), { ...read(1, null, 0, 1), key: 'other' }],
      new Map([
        ['book', 'v0'],
        ['other', null],
      ]),
    );
    expect(result.report).toBe('');
    expect(result.linearizable).toBe(true);
  });

  it('a stale read after an acknowledged write is not linearizable, and the explanation names the read and the write', () => {
    const result = check([write(1, 'a', 0, 10), write(2, 'b', 11, 20), read(3, 'a', 25, 30), read(1, 'b', 40, 41)]);
    expect(result.linearizable).toBe(false);
    expect(result.report).toContain('stale read');
    expect(result.report).toContain('read → "a" by process 3 [25.0 – 30.0 ms]');
    expect(result.report).toContain('acknowledged before the read: write "b" by process 2 [11.0 – 20.0 ms]');
  });

  it('fresh, stale, fresh: the value alternates back to an overwritten one and forward again', () => {
    const result = check([
      write(1, 'a', 0, 5),
      write(1, 'b', 6, 10),
      read(2, 'b', 11, 12),
      read(3, 'a', 13, 14),
      read(2, 'b', 15, 16),
    ]);
    expect(result.linearizable).toBe(false);
    expect(result.report).toContain('read → "a" by process 3 [13.0 – 14.0 ms]');
    expect(result.report).toMatch(/read → "b" by process 2 \[15\.0 – 16\.0 ms\]/);
  });

  it('a read that saw the new value, then one that did not start before the first ended and saw the old one', () => {
    // The write is still in flight, so either value alone is fine; but not new then old.
    const result = check([write(1, 'a', 0, 100), read(2, 'a', 10, 20), read(3, 'v0', 30, 40)]);
    expect(result.linearizable).toBe(false);
  });

  it('an unknown write that takes effect late (read long after its client gave up) is linearizable', () => {
    const result = check([
      write(1, 'a', 0, 5, 'unknown'),
      read(2, 'v0', 10, 11),
      write(3, 'b', 12, 13),
      read(2, 'b', 14, 15),
      read(2, 'a', 20, 21),
      read(3, 'a', 22, 23),
    ]);
    expect(result.report).toBe('');
    expect(result.linearizable).toBe(true);
  });

  it('an unknown write that never takes effect (its value never read) is linearizable', () => {
    const result = check([write(1, 'a', 0, 5, 'unknown'), read(2, 'v0', 10, 11), write(3, 'b', 12, 13), read(2, 'b', 14, 15)]);
    expect(result.linearizable).toBe(true);
  });

  it('an unknown write whose value is read before its invocation is not linearizable', () => {
    const result = check([read(2, 'a', 0, 5), write(1, 'a', 10, 20, 'unknown')]);
    expect(result.linearizable).toBe(false);
    expect(result.report).toContain('before the write of it began');
  });

  it('a read of a value never written is not linearizable', () => {
    const result = check([write(1, 'a', 0, 5), read(2, 'zzz', 6, 7)]);
    expect(result.linearizable).toBe(false);
    expect(result.report).toContain('never written');
  });

  it('failed ops and unknown reads are dropped: a failed write read later is an anomaly, an unknown read of nonsense is not', () => {
    expect(check([write(1, 'a', 0, 5, 'fail'), read(2, 'v0', 6, 7), read(3, 'nonsense', 8, 9, 'unknown')]).linearizable).toBe(true);
    expect(check([write(1, 'a', 0, 5, 'fail'), read(2, 'a', 6, 7)]).linearizable).toBe(false);
  });

  it('keys are checked apart: an anomaly on one key is reported for that key only', () => {
    const other = (op: RegisterOp): RegisterOp => ({ ...op, key: 'other' });
    const result = check(
      [write(1, 'a', 0, 5), read(2, 'a', 6, 7), other(write(1, 'x', 0, 5)), other(write(1, 'y', 6, 7)), other(read(3, 'x', 8, 9))],
      new Map([
        ['book', 'v0'],
        ['other', 'w0'],
      ]),
    );
    expect(result.keys.map((verdict) => [verdict.key, verdict.linearizable])).toEqual([
      ['book', true],
      ['other', false],
    ]);
    expect(result.report).toMatch(/^key other/);
  });
});

/**
 * A history of `clients` clients on `keys` registers, valid by construction: each op takes
 * effect at a random moment inside its interval, and reads return what that order gives.
 * `unknownShare` of the writes come back unknown (half of them never take effect).
 */
function generatedHistory({ clients, opsPerClient, keys, unknownShare = 0 }: { clients: number; opsPerClient: number; keys: number; unknownShare?: number }) {
  const initial = new Map(Array.from({ length: keys }, (_, key) => [`k${key}`, `initial ${key}`] as const));
  const planned: Array<{ op: RegisterOp; takesEffectAt: number }> = [];
  let sequence = 0;
  for (let process = 0; process < clients; process++) {
    let now = Math.random() * 5;
    for (let n = 0; n < opsPerClient; n++) {
      const invokedAt = now;
      const completedAt = invokedAt + 0.5 + Math.random() * 10;
      const key = `k${Math.floor(Math.random() * keys)}`;
      const kind = Math.random() < 0.5 ? 'write' : 'read';
      const unknown = kind === 'write' && Math.random() < unknownShare;
      const takesEffectAt = unknown && Math.random() < 0.5 ? Infinity : invokedAt + Math.random() * (unknown ? 50 : completedAt - invokedAt);
      const value = kind === 'write' ? `value ${sequence++}` : null;
      planned.push({ op: { process, key, kind, value, invokedAt, completedAt, outcome: unknown ? 'unknown' : 'ok' }, takesEffectAt });
      now = completedAt + Math.random() * 2;
    }
  }
  const registers = new Map<string, string | null>(initial);
  for (const { op, takesEffectAt } of [...planned].sort((a, b) => a.takesEffectAt - b.takesEffectAt)) {
    if (takesEffectAt === Infinity) continue;
    if (op.kind === 'write') registers.set(op.key, op.value);
    else op.value = registers.get(op.key)!;
  }
  return { history: planned.map(({ op }) => op), initial };
}

describe('generated histories', () => {
  it('5 000 ops of 12 clients on 5 keys, 10% of the writes unknown: linearizable, checked well under a second', () => {
    const { history, initial } = generatedHistory({ clients: 12, opsPerClient: 420, keys: 5, unknownShare: 0.1 });
    const began = performance.now();
    const result = checkRegisterHistory(history, initial);
    const took = performance.now() - began;
    expect(result.report).toBe('');
    expect(result.linearizable).toBe(true);
    expect(took).toBeLessThan(1_000);
  });

  it('5 000 ops of 12 clients on 5 keys with one read made stale: found and explained, well under a second', () => {
    const { history, initial } = generatedHistory({ clients: 12, opsPerClient: 420, keys: 5, unknownShare: 0.1 });
    // A read late in the history returns the value of its key's first acknowledged write, long overwritten.
    const firstWrite = [...history].sort((a, b) => a.completedAt - b.completedAt).find((op) => op.kind === 'write' && op.outcome === 'ok')!;
    const lateReads = history.filter((op) => op.key === firstWrite.key && op.kind === 'read' && op.invokedAt > firstWrite.completedAt + 500);
    const victim = lateReads[Math.floor(lateReads.length / 2)]!;
    expect(victim.value).not.toBe(firstWrite.value);
    victim.value = firstWrite.value;
    const began = performance.now();
    const result = checkRegisterHistory(history, initial);
    const took = performance.now() - began;
    expect(result.linearizable).toBe(false);
    expect(result.keys.filter((verdict) => verdict.linearizable !== true).map((verdict) => verdict.key)).toEqual([firstWrite.key]);
    expect(result.report).toContain('stale read');
    expect(result.report).toContain(`read → ${JSON.stringify(firstWrite.value)} by process ${victim.process}`);
    expect(took).toBeLessThan(1_000);
  });
});
