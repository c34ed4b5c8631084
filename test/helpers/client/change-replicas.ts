// The change feed's replica run (test/stores/change-feed-order.test.ts, and on Galera
// test/stores/galera-cluster.test.ts): writers create, update and delete concurrently through
// every instance; subscribers list, then follow the list's Changes-Cursor, join late, drop their
// connection at random and resume from their last event id on any instance; one instance is
// killed and started again mid-run. Each subscriber's copy, built only from the events in the
// order received, must equal the store; no event reaches a subscriber twice; no book's version
// goes backwards.
import { expect } from 'vitest';
import { ApiClient } from './api-client.js';
import type { Book } from './books.js';
import { ChangeStream, type ChangeEvent } from './change-stream.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A subscriber's copy of the collection, built only from the events it receives. */
class Subscriber {
  readonly copy = new Map<number, Record<string, unknown>>();
  readonly seenIds = new Set<string>();
  readonly problems: string[] = [];
  lastEventId: string | undefined;
  events = 0;
  reconnections = 0;

  constructor(readonly name: string) {}

  apply(event: ChangeEvent): void {
    if (this.seenIds.has(event.id)) this.problems.push(`${this.name}: event ${event.id} delivered twice`);
    this.seenIds.add(event.id);
    this.lastEventId = event.id;
    this.events += 1;
    const id = event.data.id as number;
    const version = event.data.version as number;
    const before = this.copy.get(id);
    // A book known only from the list has no version (lists carry none): a write that raced the
    // list may be in it and also after its cursor (docs/api.md "List, then follow"). Every book
    // whose version came from an event must go up by exactly one per event, in order.
    const known = before?.version !== undefined ? (before.version as number) : undefined;
    if (event.event === 'created') {
      if (known !== undefined) this.problems.push(`${this.name}: book ${id} created twice`);
      if (version !== 1) this.problems.push(`${this.name}: book ${id} created at version ${version}`);
      this.copy.set(id, event.data);
    } else if (event.event === 'updated') {
      if (known !== undefined && version !== known + 1) this.problems.push(`${this.name}: book ${id} went from version ${known} to ${version}`);
      this.copy.set(id, event.data);
    } else {
      if (known !== undefined && version !== known) this.problems.push(`${this.name}: book ${id} deleted at version ${version}, last seen ${known}`);
      this.copy.delete(id);
    }
  }

  /** The copy as GET /books lists it: by id, without versions. */
  list(): unknown[] {
    return [...this.copy.values()]
      .sort((a, b) => (a.id as number) - (b.id as number))
      .map(({ version: _version, ...book }) => book);
  }
}

export interface Replicas {
  urls(): string[];
  /** Kills one instance (SIGKILL) and starts it again. */
  killAndRestartOne(): Promise<void>;
}

export async function replicaRun(replicas: Replicas, token: string, seed: number): Promise<void> {
  let random = seed;
  const next = () => ((random = (random * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const pick = <T,>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const known: number[] = [];
  let writing = true;
  let writes = 0;

  async function writer(): Promise<void> {
    while (writing) {
      const url = pick(replicas.urls());
      const client = new ApiClient(url);
      const roll = next();
      try {
        if (roll < 0.4 || known.length < 5) {
          const response = await client.request('POST', '/book', { token, body: { title: `t${writes}`, author: `a${writes % 7}`, year: writes % 3000 } });
          if (response.status === 201) known.push((response.body.data as Book).id);
        } else if (roll < 0.85) {
          await client.request('PUT', `/book/${pick(known)}`, { token, body: { year: Math.floor(next() * 3000) } });
        } else {
          await client.request('DELETE', `/book/${pick(known)}`, { token });
        }
        writes += 1;
      } catch {
        // The instance was killed mid-request: what it did or did not write is in the store, which the copies are compared with.
        await pause(20);
      }
    }
  }

  async function subscribe(subscriber: Subscriber, until: () => boolean): Promise<void> {
    while (!until()) {
      let stream: ChangeStream;
      try {
        stream = await ChangeStream.follow(pick(replicas.urls()), { token, ...(subscriber.lastEventId && { lastEventId: subscriber.lastEventId }) });
      } catch {
        await pause(50);
        continue;
      }
      subscriber.reconnections += 1;
      let applied = 0;
      const stayMs = 100 + next() * 700;
      const started = Date.now();
      while (Date.now() - started < stayMs && stream.state === 'open' && !until()) {
        await pause(20);
        for (; applied < stream.events.length; applied++) subscriber.apply(stream.events[applied]!);
      }
      stream.close();
      // Events read before the close are the client's: applied.
      for (; applied < stream.events.length; applied++) subscriber.apply(stream.events[applied]!);
    }
  }

  // The first subscribers list first, then follow the list's cursor; later ones join mid-run from a list too.
  async function joined(name: string): Promise<Subscriber> {
    const subscriber = new Subscriber(name);
    for (;;) {
      try {
        const list = await new ApiClient(pick(replicas.urls())).request('GET', '/books', { token });
        for (const book of list.body.data as Book[]) subscriber.copy.set(book.id, { ...book, version: undefined });
        subscriber.lastEventId = list.headers.get('changes-cursor')!;
        return subscriber;
      } catch {
        await pause(50);
      }
    }
  }

  const writers = Array.from({ length: 4 }, () => writer());
  const subscribers: Subscriber[] = [];
  const following: Promise<void>[] = [];
  let stopFollowing = false;
  const add = async (name: string) => {
    const subscriber = await joined(name);
    subscribers.push(subscriber);
    following.push(subscribe(subscriber, () => stopFollowing));
  };
  await add('s1');
  await add('s2');
  await pause(1_000);
  await add('late s3');
  await pause(500);
  await replicas.killAndRestartOne();
  await add('late s4');
  await pause(1_500);
  writing = false;
  await Promise.all(writers);
  stopFollowing = true;
  await Promise.all(following);

  // A last connection each, until the copy equals the store.
  const store = (await new ApiClient(replicas.urls()[0]!).request('GET', '/books', { token })).body.data;
  for (const subscriber of subscribers) {
    let caughtUp = false;
    const deadline = Date.now() + 15_000;
    await subscribe(subscriber, () => (caughtUp = JSON.stringify(subscriber.list()) === JSON.stringify(store)) || Date.now() > deadline);
    expect(subscriber.problems).toEqual([]);
    // Books the subscriber knows only from its list carry no version: compare the books alone.
    expect(subscriber.list(), `${subscriber.name}: ${subscriber.events} events, ${subscriber.reconnections} connections`).toEqual(store);
    expect(caughtUp).toBe(true);
  }
  expect(writes).toBeGreaterThan(100);
}
