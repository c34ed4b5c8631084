// Whether a service honours Idempotency-Key, asked before its keyed POST /book scenario runs: a
// service without keys ignores the header, and the report must then say that the row measured a
// plain POST /book.
import { randomBytes } from 'node:crypto';
import { getToken, request } from './client.mjs';
import { BOOK_BODY } from './settings.mjs';

/**
 * POST /book twice with one fresh key: true when the second answer is the stored one
 * (`Idempotent-Replayed: true`, the same book). The books it made are deleted again, so the
 * store keeps its seeded books only.
 */
export async function honoursIdempotencyKeys(port, label) {
  const token = await getToken(port);
  const headers = { 'idempotency-key': `bench-probe-${randomBytes(8).toString('hex')}` };
  const first = await request(port, 'POST', '/book', { token, body: BOOK_BODY, headers });
  const again = await request(port, 'POST', '/book', { token, body: BOOK_BODY, headers });
  for (const answer of [first, again]) {
    if (answer.status !== 201) {
      throw new Error(`${label}: POST /book with an Idempotency-Key answered ${answer.status}: ${answer.text.slice(0, 200)}`);
    }
  }
  const ids = new Set([first.json.data.id, again.json.data.id]);
  for (const id of ids) {
    const deleted = await request(port, 'DELETE', `/book/${id}`, { token });
    if (deleted.status !== 200) throw new Error(`${label}: DELETE /book/${id} answered ${deleted.status}: ${deleted.text.slice(0, 200)}`);
  }
  return again.headers['idempotent-replayed'] === 'true' && ids.size === 1;
}
