// Changing SECRET_TOKEN without signing anyone out (docs/operations.md "Changing SECRET_TOKEN"):
// SECRET_TOKEN_PREVIOUS is a secret the service verifies with and never signs with. Two
// instances go through the documented steps, restarted one at a time; at every step every token
// issued so far is accepted by every instance (no 401 for a valid token), and new tokens are
// signed with the secret SECRET_TOKEN names.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../helpers/client/api-client.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';

const OLD = randomBytes(32).toString('base64url');
const NEW = randomBytes(32).toString('base64url');

describe('secret rotation across two instances, restarted one at a time', () => {
  const running: InProcessService[] = [];
  afterAll(async () => {
    await Promise.all(running.map((service) => service.stop()));
  });

  async function start(env: Record<string, string>): Promise<InProcessService> {
    const service = await startService({ kind: 'sqlite', env });
    running.push(service);
    return service;
  }
  async function restart(service: InProcessService, env: Record<string, string>): Promise<InProcessService> {
    await service.stop();
    running.splice(running.indexOf(service), 1);
    return start(env);
  }
  /** Every token on every instance: 200 each. */
  async function expectAccepted(instances: InProcessService[], tokens: string[]) {
    for (const instance of instances) {
      for (const token of tokens) {
        const answer = await new ApiClient(instance.baseUrl).request('GET', '/books', { token });
        expect(answer.status, `${instance.baseUrl} with a token`).toBe(200);
      }
    }
  }
  const tokenOf = (service: InProcessService) => new ApiClient(service.baseUrl).token();

  it('old secret → both secrets accepted → the new one signs → the old one dropped, no valid token refused on the way', async () => {
    let a = await start({ SECRET_TOKEN: OLD });
    let b = await start({ SECRET_TOKEN: OLD });
    const signedWithOld = await tokenOf(a);
    await expectAccepted([a, b], [signedWithOld]);

    // Step 1: each instance also accepts the new secret; both still sign with the old one.
    a = await restart(a, { SECRET_TOKEN: OLD, SECRET_TOKEN_PREVIOUS: NEW });
    await expectAccepted([a, b], [signedWithOld, await tokenOf(a)]);
    b = await restart(b, { SECRET_TOKEN: OLD, SECRET_TOKEN_PREVIOUS: NEW });
    await expectAccepted([a, b], [signedWithOld]);

    // Step 2: each instance signs with the new secret and still accepts the old one.
    a = await restart(a, { SECRET_TOKEN: NEW, SECRET_TOKEN_PREVIOUS: OLD });
    const signedWithNew = await tokenOf(a);
    expect(signedWithNew).not.toBe(signedWithOld);
    await expectAccepted([a, b], [signedWithOld, signedWithNew]);
    b = await restart(b, { SECRET_TOKEN: NEW, SECRET_TOKEN_PREVIOUS: OLD });
    await expectAccepted([a, b], [signedWithOld, signedWithNew, await tokenOf(b)]);

    // The new token is signed with the new secret: an instance that knows only the old one refuses it.
    const onlyOld = await start({ SECRET_TOKEN: OLD });
    expect((await new ApiClient(onlyOld.baseUrl).request('GET', '/books', { token: signedWithNew })).status).toBe(401);
    // Step 3 (once the old tokens expired, 15 minutes after step 2): SECRET_TOKEN_PREVIOUS removed.
    // The old tokens are refused then, the new ones accepted.
    const newOnly = await start({ SECRET_TOKEN: NEW });
    expect((await new ApiClient(newOnly.baseUrl).request('GET', '/books', { token: signedWithOld })).status).toBe(401);
    await expectAccepted([newOnly], [signedWithNew]);
  });
});
