// GET /metrics (docs/operations.md "Health, metrics and the API document"): Prometheus text with http_requests_total and
// http_request_duration_seconds by method, route pattern and status, the store's pool gauge
// and Node's default process metrics; METRICS=false removes the route.
import { createConnection } from 'mysql2/promise';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { useService } from '../helpers/service/start-service.js';
import { forEachStore } from '../helpers/stores/for-each-store.js';
import type { StoreKind } from '../helpers/stores/dialects.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Exposition {
  samples: Sample[];
  /** `# TYPE` lines: metric family → type. */
  types: Map<string, string>;
}

/** Parses the Prometheus text exposition format (0.0.4); throws on a line it cannot read. */
function parseExposition(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
      if (type) types.set(type[1] as string, type[2] as string);
      continue;
    }
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    const labelText = match[2] ?? '';
    const labelPattern = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g;
    let consumed = 0;
    for (const label of labelText.matchAll(labelPattern)) {
      labels[label[1] as string] = (label[2] as string).replace(/\\(.)/g, (_all, c: string) => (c === 'n' ? '\n' : c));
      consumed += label[0].length;
    }
    if (consumed !== labelText.length) throw new Error(`unreadable labels: ${line}`);
    // Prometheus reads NaN and ±Inf case-insensitively (Go's strconv.ParseFloat); prom-client writes `Nan`.
    const raw = (match[3] as string).toLowerCase();
    const value = raw === 'nan' ? NaN : /^[+-]?inf(inity)?$/.test(raw) ? (raw.startsWith('-') ? -Infinity : Infinity) : Number(raw);
    if (Number.isNaN(value) && raw !== 'nan') throw new Error(`unreadable value: ${line}`);
    samples.push({ name: match[1] as string, labels, value });
  }
  return { samples, types };
}

function find(exposition: Exposition, name: string, labels: Record<string, string>): Sample[] {
  return exposition.samples.filter(
    (sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  );
}

/** The single sample `name{labels}`, or a failure listing what there is. */
function value(exposition: Exposition, name: string, labels: Record<string, string>): number {
  const found = find(exposition, name, labels);
  if (found.length !== 1) {
    const present = exposition.samples.filter((sample) => sample.name === name).map((sample) => JSON.stringify(sample.labels));
    throw new Error(`${found.length} samples of ${name}${JSON.stringify(labels)}; present:\n${present.join('\n')}`);
  }
  return (found[0] as Sample).value;
}

/** A row lock on one book, held from a session of its own until released. */
async function holdRowLock(kind: StoreKind, url: string, id: number): Promise<{ release(): Promise<void> }> {
  if (kind === 'postgres') {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('begin');
    await client.query('select id from books where id = $1 for update', [id]);
    return { release: () => client.end() };
  }
  const connection = await createConnection({ uri: url });
  await connection.query('start transaction');
  await connection.query('select id from books where id = ? for update', [id]);
  return { release: () => connection.end() };
}

forEachStore((kind) => {
  describe('GET /metrics after traffic', () => {
    const service = useService(kind, { LOGIN_RATE_LIMIT: '0' });
    const MISSING_READS = 3;
    let exposition: Exposition;
    let response: Response;
    let bookId: number;

    // Traffic: 2xx, 401, 404 on /book/:id and on an unknown path; then one scrape.
    beforeAll(async () => {
      const { client } = service;
      const token = await client.token();
      bookId = (await client.createBook(token, { title: 'Dune', author: 'Frank Herbert', year: 1965 })).id;
      expect((await client.request('GET', `/book/${bookId}`, { token })).status).toBe(200);
      expect((await client.request('GET', '/books', { token })).status).toBe(200);
      expect((await client.request('GET', '/books')).status).toBe(401);
      expect((await client.request('GET', '/books', { token: 'not-a-token' })).status).toBe(401);
      for (const id of [123_456_789, 987_654_321, 555_000_555]) {
        expect((await client.request('GET', `/book/${id}`, { token })).status).toBe(404);
      }
      expect((await client.request('GET', '/no/such/route/424242')).status).toBe(404);

      response = await fetch(`${service.current.baseUrl}/metrics`);
      expect(response.status).toBe(200);
      exposition = parseExposition(await response.text());
    });

    it('is Prometheus text: Content-Type text/plain; version=0.0.4, no token needed', () => {
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4(;|$)/);
      expect(exposition.samples.length).toBeGreaterThan(0);
    });

    it('http_requests_total is a counter by method, route pattern and status', () => {
      expect(exposition.types.get('http_requests_total')).toBe('counter');
      for (const sample of find(exposition, 'http_requests_total', {})) {
        expect(Object.keys(sample.labels).sort()).toEqual(['method', 'route', 'status']);
      }
      expect(value(exposition, 'http_requests_total', { method: 'POST', route: '/token', status: '200' })).toBe(1);
      expect(value(exposition, 'http_requests_total', { method: 'POST', route: '/book', status: '201' })).toBe(1);
      expect(value(exposition, 'http_requests_total', { method: 'GET', route: '/book/:id', status: '200' })).toBe(1);
      expect(value(exposition, 'http_requests_total', { method: 'GET', route: '/books', status: '200' })).toBe(1);
      expect(value(exposition, 'http_requests_total', { method: 'GET', route: '/books', status: '401' })).toBe(2);
      expect(value(exposition, 'http_requests_total', { method: 'GET', route: '/book/:id', status: '404' })).toBe(MISSING_READS);
    });

    it('http_request_duration_seconds is a histogram with the same labels', () => {
      expect(exposition.types.get('http_request_duration_seconds')).toBe('histogram');
      const labels = { method: 'GET', route: '/book/:id', status: '404' };
      expect(value(exposition, 'http_request_duration_seconds_count', labels)).toBe(MISSING_READS);
      expect(value(exposition, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(MISSING_READS);
      const sum = value(exposition, 'http_request_duration_seconds_sum', labels);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThan(30);
      for (const sample of find(exposition, 'http_request_duration_seconds_bucket', {})) {
        expect(Object.keys(sample.labels).sort()).toEqual(['le', 'method', 'route', 'status']);
      }
      expect(value(exposition, 'http_request_duration_seconds_count', { method: 'GET', route: '/books', status: '401' })).toBe(2);
    });

    it('each series of http_request_duration_seconds has cumulative buckets in rising `le` order, +Inf = count, as many as http_requests_total', () => {
      const counted = find(exposition, 'http_requests_total', {});
      expect(counted.length).toBeGreaterThan(5);
      for (const { labels, value: requests } of counted) {
        const buckets = find(exposition, 'http_request_duration_seconds_bucket', labels);
        const bounds = buckets.map((bucket) => (bucket.labels.le === '+Inf' ? Infinity : Number(bucket.labels.le)));
        expect(bounds, JSON.stringify(labels)).toEqual([0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, Infinity]);
        const counts = buckets.map((bucket) => bucket.value);
        expect(counts, JSON.stringify(labels)).toEqual([...counts].sort((a, b) => a - b));
        expect(counts.at(-1)).toBe(requests);
        expect(value(exposition, 'http_request_duration_seconds_count', labels)).toBe(requests);
      }
    });

    it('route is always the pattern: no raw id or raw URL ever becomes a label value', () => {
      const routes = new Set(
        exposition.samples.filter((sample) => sample.name.startsWith('http_request')).map((sample) => sample.labels.route),
      );
      expect(routes.size).toBeGreaterThan(0);
      for (const route of routes) {
        expect(route).toBeDefined();
        expect(route, 'a raw number in a route label').not.toMatch(/\d{3,}/);
        expect(route).not.toContain(String(bookId));
        expect(route).not.toContain('/no/such/route');
      }
      expect(routes).toContain('/book/:id');
    });

    it('requests whose URL the router refuses (/book/%zz, /%zz, a 200-digit id) are counted too', async () => {
      const total = (scrape: Exposition) =>
        find(scrape, 'http_requests_total', {})
          .filter((sample) => sample.labels.route !== '/metrics')
          .reduce((sum, sample) => sum + sample.value, 0);
      const scrape = async () => parseExposition(await (await fetch(`${service.current.baseUrl}/metrics`)).text());
      const before = await scrape();
      const paths = ['/book/%zz', '/%zz', `/book/${'9'.repeat(200)}`];
      for (const path of paths) expect((await fetch(service.current.baseUrl + path)).status, path).toBeLessThan(500);
      await expect.poll(async () => total(await scrape()) - total(before)).toBe(paths.length);
    });

    it("Node's default process metrics are there", () => {
      const names = new Set(exposition.samples.map((sample) => sample.name));
      expect(names.has('process_cpu_seconds_total') || names.has('nodejs_heap_size_total_bytes')).toBe(true);
      expect(names).toContain('process_cpu_seconds_total');
      expect(names).toContain('nodejs_heap_size_total_bytes');
    });

    it(`${kind}: book_store_pool_connections by state (total, idle, in_use, waiting, max)`, () => {
      // SQLite has a single connection: total = max = 1. The pools default to DB_POOL_MAX = 10.
      const max = kind === 'sqlite' ? 1 : 10;
      expect(exposition.types.get('book_store_pool_connections')).toBe('gauge');
      const total = value(exposition, 'book_store_pool_connections', { state: 'total' });
      const idle = value(exposition, 'book_store_pool_connections', { state: 'idle' });
      const inUse = value(exposition, 'book_store_pool_connections', { state: 'in_use' });
      expect(total).toBeGreaterThanOrEqual(1); // the traffic above opened at least one connection
      expect(idle + inUse).toBe(total);
      expect(value(exposition, 'book_store_pool_connections', { state: 'waiting' })).toBe(0);
      expect(value(exposition, 'book_store_pool_connections', { state: 'max' })).toBe(max);
      expect(total).toBeLessThanOrEqual(max);
    });
  });

  if (kind !== 'sqlite') {
    describe('DB_POOL_MAX=4', () => {
      // A wait for a connection long enough for the load test to watch it.
      const service = useService(kind, { DB_POOL_MAX: '4', DB_QUERY_TIMEOUT: '20' });

      it(`${kind}: book_store_pool_connections{state="max"} = 4`, async () => {
        const exposition = parseExposition(await (await fetch(`${service.current.baseUrl}/metrics`)).text());
        expect(value(exposition, 'book_store_pool_connections', { state: 'max' })).toBe(4);
      });

      it(`${kind}: under load the gauges follow the pool: every connection in use and the rest waiting, then all idle`, async () => {
        const { client } = service;
        const token = await client.token();
        const book = await client.createBook(token, { title: 'Held', author: 'Pool', year: 2020 });
        const gauges = async () => {
          const exposition = parseExposition(await (await fetch(`${service.current.baseUrl}/metrics`)).text());
          const state = (name: string) => value(exposition, 'book_store_pool_connections', { state: name });
          return { total: state('total'), idle: state('idle'), in_use: state('in_use'), waiting: state('waiting') };
        };
        const lock = await holdRowLock(kind, service.current.testStore.directUrl ?? service.current.testStore.url, book.id);
        let deletes: Promise<{ status: number; text: string }[]>;
        try {
          // Six DELETEs of the locked row: four take every connection and wait for the lock, two wait for a connection.
          deletes = Promise.all(Array.from({ length: 6 }, () => client.request('DELETE', `/book/${book.id}`, { token })));
          await expect.poll(gauges, { timeout: 10_000 }).toEqual({ total: 4, idle: 0, in_use: 4, waiting: 2 });
        } finally {
          await lock.release();
        }
        for (const response of await deletes) expect(response.status, response.text).toBeLessThan(500);
        await expect.poll(gauges, { timeout: 10_000 }).toEqual({ total: 4, idle: 4, in_use: 0, waiting: 0 });
      });
    });
  }

  describe('METRICS=false', () => {
    const service = useService(kind, { METRICS: 'false' });

    it('GET /metrics → 404 "Route not found" envelope', async () => {
      const response = await service.client.request('GET', '/metrics');
      expect(response.status).toBe(404);
      expect(response.body).toEqual({ status: 404, message: 'Route not found', data: null });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it('/metrics is not in the OpenAPI document either', async () => {
      const document = (await (await fetch(`${service.current.baseUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      expect(Object.keys(document.paths)).not.toContain('/metrics');
      expect(Object.keys(document.paths)).toContain('/healthz');
    });
  });
});
