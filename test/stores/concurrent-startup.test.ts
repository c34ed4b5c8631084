// Versioned migrations run at startup, safely when several instances start at once (docs/api.md
// "Running on PostgreSQL or MySQL"; "migrations safe under concurrent startup"): three service
// processes started at the same moment on one empty PostgreSQL database all come up, the
// migrations are applied exactly once, and every instance serves requests.
import { afterAll, expect, it } from 'vitest';
import { MIGRATION_NAMES } from '../../src/store/migrations/index.js';
import { attempt } from '../helpers/client/attempt.js';
import { killAllChildServices, startService, type ChildService } from '../helpers/service/start-service.js';
import { login } from '../helpers/client/api-client.js';
import { createTestStore, type TestStore } from '../helpers/stores/test-store.js';
import { describeIf } from '../helpers/requirements.js';
import pg from 'pg';

const INSTANCES = 3;
const ROUNDS = 3;

// Requirement: it needs the shared PostgreSQL server; skipped (reason printed) when DIALECTS leaves PostgreSQL out, or outside CI when it does not answer.
describeIf('postgres')('concurrent startup of several instances on one empty PostgreSQL database', () => {
  const stores: TestStore[] = [];

  afterAll(async () => {
    await killAllChildServices();
    for (const store of stores) await store.drop();
  }, 60_000);

  it.each(Array.from({ length: ROUNDS }, (_, round) => round + 1))(
    `round %i: ${INSTANCES} instances started at once all come up; migrations applied once; each serves requests`,
    async () => {
      const store = await createTestStore('postgres');
      stores.push(store);
      const migrationNames = [...MIGRATION_NAMES].sort();

      let services: ChildService[] = [];
      try {
        // Spawned together, so their migrations race.
        services = await Promise.all(
          Array.from({ length: INSTANCES }, () => startService({ childProcess: true, dbUrl: store.url, env: { LOG_LEVEL: 'info' } })),
        );

        const client = new pg.Client({ connectionString: store.url });
        await client.connect();
        try {
          const { rows } = await client.query<{ name: string }>('select name from book_service_migrations order by name');
          expect(rows.map((row) => row.name)).toEqual(migrationNames);
          const lock = await client.query<{ is_locked: number }>('select is_locked from book_service_migrations_lock');
          expect(lock.rows).toEqual([{ is_locked: 0 }]);
        } finally {
          await client.end();
        }

        // Exactly one instance applied each migration; the others found them applied.
        for (const name of migrationNames) {
          const appliedBy = services.filter((service) =>
            service.process.stdout().split('\n').some((line) => line.includes('"migration applied"') && line.includes(`"${name}"`)),
          );
          expect(appliedBy, `instances that logged "migration applied" for ${name}`).toHaveLength(1);
        }

        // Every instance serves: each creates a book, and every instance reads every book.
        const tokens = await Promise.all(services.map((service) => login(service.baseUrl)));
        const created = await Promise.all(
          services.map(async (service, i) => {
            const outcome = await attempt(service.baseUrl, 'POST', '/book', {
              token: tokens[i],
              body: { title: `From instance ${i}`, author: 'Startup race', year: 2000 + i },
            });
            expect(outcome.status, outcome.text).toBe(201);
            return outcome.body!.data as { id: number };
          }),
        );
        for (const [i, service] of services.entries()) {
          const list = await attempt(service.baseUrl, 'GET', '/books', { token: tokens[i] });
          expect(list.status, list.text).toBe(200);
          expect((list.body!.data as Array<{ id: number }>).map((book) => book.id).sort((a, b) => a - b)).toEqual(
            created.map((book) => book.id).sort((a, b) => a - b),
          );
        }
      } finally {
        for (const service of services) {
          const code = await service.stop('SIGTERM');
          expect(code, `exit after SIGTERM; stderr: ${service.process.stderr()}`).toBe(0);
        }
      }
    },
    45_000,
  );
});
