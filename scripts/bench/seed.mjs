// The books the bench seeds: the i-th book's fields, and seeding a running server (the service or
// the Go/Gin reference) with SEED_BOOKS books through its API, checked by listing them.
import http from 'node:http';
import { getToken, request } from './client.mjs';
import { SEED_BOOKS } from './settings.mjs';

/** Title, author and year of the i-th seeded book. */
export function seedBook(i) {
  return [`Benchmark Book ${i}`, `Author ${i % 97}`, 1900 + (i % 125)];
}

async function seedViaApi(port, token, count) {
  const ids = [];
  let next = 1;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next <= count) {
          const i = next++;
          const [title, author, year] = seedBook(i);
          const response = await request(port, 'POST', '/book', {
            token,
            agent,
            body: JSON.stringify({ title, author, year }),
          });
          if (response.status !== 201) {
            throw new Error(`seeding: POST /book answered ${response.status}: ${response.text.slice(0, 200)}`);
          }
          ids.push(Number(response.json.data.id));
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return ids.sort((a, b) => a - b);
}

/** Seeds SEED_BOOKS books and checks GET /books lists them; returns their ids, sorted. */
export async function seedAndCheck(port, errorPrefix = '') {
  const ids = await seedViaApi(port, await getToken(port), SEED_BOOKS);
  const list = await request(port, 'GET', '/books', { token: await getToken(port) });
  if (list.status !== 200 || list.json?.data?.length !== SEED_BOOKS) {
    throw new Error(`${errorPrefix}GET /books after seeding answered ${list.status} with ${list.json?.data?.length} books`);
  }
  return ids;
}
