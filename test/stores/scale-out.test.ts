// The service is stateless apart from the store, so it scales out as several instances
// behind a load balancer (README: "several instances can share one database"): two service
// processes on one PostgreSQL database share tokens (same SECRET_TOKEN) and books.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { attempt } from '../helpers/client/attempt.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { login } from '../helpers/client/api-client.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';
import { describeIf } from '../helpers/requirements.js';

// Requirement: it needs the shared PostgreSQL server; skipped (reason printed) when DIALECTS leaves PostgreSQL out, or outside CI when it does not answer.
describeIf('postgres')('scale-out: two instances on one PostgreSQL database', () => {
  let store: TestStore;
  let a: ChildService;
  let b: ChildService;

  beforeAll(async () => {
    store = await createTestStore('postgres');
    // One after the other: concurrent startup has its own test.
    a = await startService({ childProcess: true, dbUrl: store.url });
    b = await startService({ childProcess: true, dbUrl: store.url });
  }, 60_000);

  afterAll(async () => {
    const codes = await Promise.all([a?.stop('SIGTERM'), b?.stop('SIGTERM')]);
    await killAllChildServices();
    await store?.drop();
    expect(codes).toEqual([0, 0]);
  }, 60_000);

  it('a token issued by A is accepted by B, and one issued by B by A', async () => {
    const fromA = await login(a.baseUrl);
    const fromB = await login(b.baseUrl);
    for (const [service, token] of [
      [b, fromA],
      [a, fromB],
    ] as const) {
      const list = await attempt(service.baseUrl, 'GET', '/books', { token });
      expect(list.status, list.text).toBe(200);
      expect(list.body?.message).toBe('Books retrieved successfully');
    }
  });

  it('a book written through A is read through B, updated through B and read back through A; deleted through A, gone on B', async () => {
    const token = await login(a.baseUrl);

    const created = await attempt(a.baseUrl, 'POST', '/book', {
      token,
      body: { title: 'Shared', author: 'Two Instances', year: 1999 },
    });
    expect(created.status, created.text).toBe(201);
    const { id } = created.body!.data as { id: number };

    const readOnB = await attempt(b.baseUrl, 'GET', `/book/${id}`, { token });
    expect(readOnB.body).toEqual({
      status: 200,
      message: 'Book retrieved successfully',
      data: { id, title: 'Shared', author: 'Two Instances', year: 1999 },
    });
    const listOnB = await attempt(b.baseUrl, 'GET', '/books', { token });
    expect(listOnB.body?.data).toContainEqual({ id, title: 'Shared', author: 'Two Instances', year: 1999 });

    const updatedOnB = await attempt(b.baseUrl, 'PUT', `/book/${id}`, { token, body: { title: 'Shared, revised', year: 2000 } });
    expect(updatedOnB.body).toEqual({
      status: 200,
      message: 'Book updated successfully',
      data: { id, title: 'Shared, revised', author: 'Two Instances', year: 2000 },
    });

    const readBackOnA = await attempt(a.baseUrl, 'GET', `/book/${id}`, { token });
    expect(readBackOnA.body).toEqual({
      status: 200,
      message: 'Book retrieved successfully',
      data: { id, title: 'Shared, revised', author: 'Two Instances', year: 2000 },
    });

    const deletedOnA = await attempt(a.baseUrl, 'DELETE', `/book/${id}`, { token });
    expect(deletedOnA.body).toEqual({ status: 200, message: 'Book deleted successfully', data: null });
    const goneOnB = await attempt(b.baseUrl, 'GET', `/book/${id}`, { token });
    expect(goneOnB.body).toEqual({ status: 404, message: 'Book not found', data: null });
  });

  it('creates interleaved across both instances get distinct ids, all visible on both', async () => {
    const token = await login(b.baseUrl);
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        attempt((i % 2 === 0 ? a : b).baseUrl, 'POST', '/book', {
          token,
          body: { title: `Interleaved ${i}`, author: i % 2 === 0 ? 'A' : 'B', year: i },
        }),
      ),
    );
    expect(outcomes.filter((o) => o.status !== 201).map((o) => o.text)).toEqual([]);
    const ids = outcomes.map((o) => (o.body!.data as { id: number }).id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const service of [a, b]) {
      const list = await attempt(service.baseUrl, 'GET', '/books', { token });
      const listed = new Set((list.body!.data as Array<{ id: number }>).map((book) => book.id));
      expect(ids.filter((id) => !listed.has(id))).toEqual([]);
    }
  });
});
