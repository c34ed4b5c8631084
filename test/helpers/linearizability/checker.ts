// A linearizability checker for histories of read/write registers, one register per key (a
// book id, its title the value), in the manner of Knossos and Porcupine: the Wing–Gong search
// with Lowe's memoization (WGL). Each key is checked on its own (a register's history is
// linearizable iff each key's is: P-compositionality).
//
// Outcomes: 'ok' happened within [invokedAt, completedAt]; 'fail' definitely did not happen
// (dropped); 'unknown' may have happened at any point after its invocation, or never: an unknown
// write gets completedAt = +∞ (Porcupine's treatment), an unknown read tells nothing (dropped).

export type OpOutcome = 'ok' | 'fail' | 'unknown';

export interface RegisterOp {
  /** Which client issued it (a client has one operation in flight at a time). */
  process: number;
  key: string;
  kind: 'write' | 'read';
  /** The value written, or the value a read returned (null: the register was absent). */
  value: string | null;
  /** Monotonic times (performance.now()), in milliseconds. */
  invokedAt: number;
  completedAt: number;
  outcome: OpOutcome;
  /** Free text for explanations: which instance answered, its status, the node in use… */
  detail?: string;
}

export interface KeyVerdict {
  key: string;
  /** How many operations the search had to place (after dropping failed ops and unknown reads). */
  checkedOps: number;
  /** true: linearizable; false: not; 'inconclusive': the search hit its step limit. */
  linearizable: boolean | 'inconclusive';
  /** For a non-linearizable key: what went wrong, in words, with the operations around it. */
  explanation?: string;
  /** Search effort: steps taken and (linearized set, state) pairs remembered. */
  steps: number;
  states: number;
}

export interface CheckOptions {
  /** Time zero for the printed times (default: the earliest invocation in the history). */
  origin?: number;
  /** Search steps per key before giving up as 'inconclusive' (default 5 million). */
  maxSteps?: number;
}

export interface CheckResult {
  linearizable: boolean;
  keys: KeyVerdict[];
  /** The explanations of every key that is not linearizable (or inconclusive), for a failure message. */
  report: string;
}

/**
 * Checks `history` against registers whose initial values are `initial` (key → value). A key
 * with operations but no initial value starts absent (null).
 */
export function checkRegisterHistory(history: readonly RegisterOp[], initial: ReadonlyMap<string, string | null>, options: CheckOptions = {}): CheckResult {
  const origin = options.origin ?? history.reduce((earliest, op) => Math.min(earliest, op.invokedAt), Infinity);
  const byKey = new Map<string, RegisterOp[]>();
  for (const op of history) {
    const ops = byKey.get(op.key) ?? [];
    ops.push(op);
    byKey.set(op.key, ops);
  }
  const keys = [...byKey].map(([key, ops]) => checkKey(key, ops, initial.get(key) ?? null, origin, options.maxSteps ?? 5_000_000));
  const bad = keys.filter((verdict) => verdict.linearizable !== true);
  return {
    linearizable: bad.length === 0,
    keys,
    report: bad.map((verdict) => `key ${verdict.key} (${verdict.checkedOps} ops): ${verdict.explanation}`).join('\n\n'),
  };
}

interface Entry {
  op: number;
  isCall: boolean;
  time: number;
  prev: Entry | undefined;
  next: Entry | undefined;
  /** The call's matching return entry (calls only). */
  match: Entry | undefined;
}

function checkKey(key: string, all: readonly RegisterOp[], initialValue: string | null, origin: number, maxSteps: number): KeyVerdict {
  // A read of a value that no write could have produced is an anomaly whatever the order.
  const readValues = new Set(all.filter((op) => op.kind === 'read' && op.outcome === 'ok').map((op) => op.value));
  const ops = all.filter(
    (op) =>
      op.outcome === 'ok' ||
      // An unknown write nobody read may as well never have happened: leaving it out of every
      // linearization changes no read, and keeps the search from trying it at every point.
      (op.outcome === 'unknown' && op.kind === 'write' && readValues.has(op.value)),
  );
  const completion = (op: RegisterOp) => (op.outcome === 'unknown' ? Infinity : op.completedAt);

  // Values as small integers: the state is one number. 0 is "absent".
  const valueIds = new Map<string | null, number>([[null, 0]]);
  const valueId = (value: string | null) => {
    let id = valueIds.get(value);
    if (id === undefined) valueIds.set(value, (id = valueIds.size));
    return id;
  };
  const opValue = ops.map((op) => valueId(op.value));
  const isWrite = ops.map((op) => op.kind === 'write');

  // Events in time order; at equal times calls come first (the ops count as concurrent).
  const events: Array<{ op: number; isCall: boolean; time: number }> = [];
  ops.forEach((op, index) => {
    events.push({ op: index, isCall: true, time: op.invokedAt });
    events.push({ op: index, isCall: false, time: completion(op) });
  });
  events.sort((a, b) => a.time - b.time || Number(b.isCall) - Number(a.isCall));
  const head: Entry = { op: -1, isCall: false, time: -Infinity, prev: undefined, next: undefined, match: undefined };
  const callOf: Entry[] = new Array(ops.length);
  let tail = head;
  for (const event of events) {
    const entry: Entry = { ...event, prev: tail, next: undefined, match: undefined };
    tail.next = entry;
    tail = entry;
    if (event.isCall) callOf[event.op] = entry;
    else callOf[event.op]!.match = entry;
  }

  const lift = (call: Entry) => {
    call.prev!.next = call.next;
    if (call.next) call.next.prev = call.prev;
    const ret = call.match!;
    ret.prev!.next = ret.next;
    if (ret.next) ret.next.prev = ret.prev;
  };
  const unlift = (call: Entry) => {
    const ret = call.match!;
    ret.prev!.next = ret;
    if (ret.next) ret.next.prev = ret;
    call.prev!.next = call;
    if (call.next) call.next.prev = call;
  };

  // Memo of (linearized set, state) already explored: a Zobrist hash of the set picks the
  // bucket, the set itself settles collisions.
  const words = Math.ceil(ops.length / 32) || 1;
  const linearized = new Uint32Array(words);
  const zobrist = Array.from({ length: ops.length }, () => [randomWord(), randomWord()] as const);
  let hashLow = 0;
  let hashHigh = 0;
  const seen = new Map<number, Array<{ high: number; state: number; set: Uint32Array }>>();
  let states = 0;
  const remember = (state: number): boolean => {
    const bucketKey = (hashLow ^ Math.imul(state + 1, 0x9e3779b1)) >>> 0;
    const bucket = seen.get(bucketKey);
    if (bucket?.some((known) => known.high === hashHigh && known.state === state && known.set.every((word, i) => word === linearized[i]))) return false;
    const known = { high: hashHigh, state, set: linearized.slice() };
    if (bucket) bucket.push(known);
    else seen.set(bucketKey, [known]);
    states++;
    return true;
  };
  const toggle = (op: number) => {
    linearized[op >>> 5]! ^= 1 << (op & 31);
    hashLow ^= zobrist[op]![0];
    hashHigh ^= zobrist[op]![1];
  };

  // How urgent placing a write is: by when the first read of its value must be placed (a
  // write is placed before any read of its value, so none of them is placed yet), else its own
  // return. Trying the most urgent write first finds a linearization with little backtracking.
  const firstReadReturn = new Map<number, number>();
  ops.forEach((op, index) => {
    if (!isWrite[index]) firstReadReturn.set(opValue[index]!, Math.min(firstReadReturn.get(opValue[index]!) ?? Infinity, op.completedAt));
  });
  const urgency = ops.map((op, index) => firstReadReturn.get(opValue[index]!) ?? completion(op));

  let state = valueId(initialValue);
  // One frame per placement; `untried`: the other writes that could have gone there instead
  // (none for a read: see below).
  const stack: Array<{ call: Entry; state: number; untried: Entry[] }> = [];
  let steps = 0;
  // The return the search got furthest to without being able to place its op: where it fails.
  let furthest: Entry | undefined;
  const place = (call: Entry, nextState: number, untried: Entry[]): boolean => {
    toggle(call.op);
    if (!remember(nextState)) {
      toggle(call.op);
      return false;
    }
    stack.push({ call, state, untried });
    state = nextState;
    lift(call);
    return true;
  };
  const verdict = (linearizable: KeyVerdict['linearizable'], explanation?: string): KeyVerdict => ({
    key,
    checkedOps: ops.length,
    linearizable,
    explanation,
    steps,
    states,
  });

  // Writes to try at the current point, most urgent last (they are popped).
  let untried: Entry[] | undefined;
  for (;;) {
    if (untried === undefined) {
      const first = head.next;
      // Done once every op that surely happened is placed: what is left are unknown writes
      // (returns at +∞), which can be placed last or never.
      if (first === undefined || (!first.isCall && first.time === Infinity)) return verdict(true);
      if (++steps > maxSteps) return verdict('inconclusive', `search stopped after ${maxSteps} steps without a verdict`);
      // The ops that may go next: those invoked before the first pending return (an op that
      // returned unplaced ends this branch: it had to come before everything after it).
      let legalRead: Entry | undefined;
      const writes: Entry[] = [];
      let entry: Entry | undefined = first;
      for (; entry !== undefined && entry.isCall; entry = entry.next) {
        if (isWrite[entry.op]) writes.push(entry);
        else if (legalRead === undefined && opValue[entry.op] === state) legalRead = entry;
      }
      if (legalRead !== undefined) {
        // A read that is legal now can be placed now without loss: any linearization from here
        // stays one with the read moved to the front (a read changes no state, and every op
        // that must precede it is placed). So it is the only choice here; if it leads nowhere
        // (or to a point already explored), neither does this point.
        if (place(legalRead, state, [])) continue;
        untried = [];
      } else {
        if (entry !== undefined && (furthest === undefined || entry.time > furthest.time)) furthest = entry;
        untried = writes.sort((a, b) => urgency[b.op]! - urgency[a.op]!);
      }
    }
    const write = untried.pop();
    if (write !== undefined) {
      if (place(write, opValue[write.op]!, untried)) untried = undefined;
      continue;
    }
    // Nothing left to try here: undo the last placement and try its alternatives.
    const last = stack.pop();
    if (last === undefined) return verdict(false, explain(ops, furthest?.op ?? 0, initialValue, origin));
    toggle(last.call.op);
    state = last.state;
    unlift(last.call);
    untried = last.untried;
  }
}

function randomWord(): number {
  return (Math.random() * 0x1_0000_0000) >>> 0;
}

/** A readable account of why `ops[stuck]` (the op the search could not get past) cannot be placed. */
function explain(ops: readonly RegisterOp[], stuck: number, initialValue: string | null, origin: number): string {
  const at = (time: number) => (time === Infinity ? '∞' : `${(time - origin).toFixed(1)}`);
  const show = (op: RegisterOp) =>
    `${op.kind === 'write' ? `write ${JSON.stringify(op.value)}` : `read → ${JSON.stringify(op.value)}`} by process ${op.process}` +
    ` [${at(op.invokedAt)} – ${op.outcome === 'unknown' ? `? ms: outcome unknown, given up at ${at(op.completedAt)}` : at(op.completedAt)} ms]` +
    (op.detail ? ` (${op.detail})` : '');
  const op = ops[stuck]!;
  const lines: string[] = [];
  const okWrites = ops.filter((other) => other.kind === 'write' && other.outcome === 'ok');
  const lastAcknowledgedBefore = (time: number, count: number) =>
    okWrites
      .filter((write) => write.completedAt < time)
      .sort((a, b) => a.completedAt - b.completedAt)
      .slice(-count);

  if (op.kind === 'read') {
    const source = ops.find((other) => other.kind === 'write' && other.value === op.value);
    // An unknown write may have taken effect as late as this read: nothing surely replaced it.
    const sourceDone = source === undefined || source.outcome === 'unknown' ? Infinity : source.completedAt;
    const overwrittenBy = source
      ? okWrites.filter((write) => write !== source && write.invokedAt > sourceDone && write.completedAt < op.invokedAt)
      : [];
    if (source === undefined && op.value !== initialValue) {
      lines.push(`a read returned a value that was never written (initial value ${JSON.stringify(initialValue)}):`, `  ${show(op)}`);
    } else if (source !== undefined && source.invokedAt > op.completedAt) {
      lines.push('a read returned a value before the write of it began:', `  ${show(op)}`, `  ${show(source)}`);
    } else if (overwrittenBy.length > 0 || (source === undefined && okWrites.some((write) => write.completedAt < op.invokedAt))) {
      const newest = overwrittenBy.at(-1) ?? lastAcknowledgedBefore(op.invokedAt, 1)[0]!;
      lines.push(
        `stale read: ${(op.invokedAt - newest.completedAt).toFixed(1)} ms before this read began, a write acknowledged ${JSON.stringify(newest.value)}, ` +
          `which replaced ${source ? 'the write of the value read' : 'the initial value'}:`,
        `  ${show(op)}`,
        source ? `  value read written by: ${show(source)}` : `  value read is the initial value`,
        ...lastAcknowledgedBefore(op.invokedAt, 3).map((write) => `  acknowledged before the read: ${show(write)}`),
      );
    } else {
      // A read that ended before this one began and already saw a newer value (one whose
      // write began after the value read here was surely written).
      const newerSeen = ops.find(
        (other) =>
          other.kind === 'read' &&
          other.completedAt < op.invokedAt &&
          other.value !== op.value &&
          (source === undefined || (ops.find((write) => write.kind === 'write' && write.value === other.value)?.invokedAt ?? -Infinity) > sourceDone),
      );
      lines.push(
        newerSeen
          ? `stale read: a read that ended ${(op.invokedAt - newerSeen.completedAt).toFixed(1)} ms before this one began had already returned the newer ${JSON.stringify(newerSeen.value)}:`
          : 'no order of the operations around this read explains the value it returned:',
        `  ${show(op)}`,
        ...(newerSeen ? [`  newer value seen by: ${show(newerSeen)}`] : []),
        ...(source ? [`  value read written by: ${show(source)}`] : []),
      );
    }
  } else {
    lines.push('no order of the operations around this write explains the reads around it:', `  ${show(op)}`);
  }
  // The ops nearest to the stuck one in time (a stale value that comes and goes, fresh, stale,
  // fresh, shows here), with the write of every value they read, however long before.
  const window = 1_000;
  const nearest = ops
    .filter((other) => other.invokedAt < op.completedAt + window / 4 && (other.outcome === 'unknown' ? Infinity : other.completedAt) > op.invokedAt - window)
    .sort((a, b) => Math.abs(a.invokedAt - op.invokedAt) - Math.abs(b.invokedAt - op.invokedAt))
    .slice(0, 30);
  const writers = nearest
    .filter((other) => other.kind === 'read')
    .map((other) => ops.find((write) => write.kind === 'write' && write.value === other.value))
    .filter((write): write is RegisterOp => write !== undefined);
  const shown = [...new Set([...nearest, ...writers])].sort((a, b) => a.invokedAt - b.invokedAt);
  lines.push(`the ${nearest.length} operations on this key nearest to it, and the writes of the values they read, by invocation (>: the one above; times from the start of the history):`);
  for (const other of shown) lines.push(`  ${other === op ? '>' : ' '} ${show(other)}`);
  return lines.join('\n');
}
