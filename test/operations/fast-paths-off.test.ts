// FAST_PATHS=off is the plain service: not one module of the speed room (src/fast/) is loaded,
// by the built service (its chunks, read back through their source maps) or from the sources.
// The same check with the paths on finds them, so it can tell.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { login } from '../helpers/client/api-client.js';
import { filesLoadedByService } from '../helpers/service/loaded-modules.js';
import { killAllChildServices } from '../helpers/service/start-service.js';

const dir = mkdtempSync(join(tmpdir(), 'books-fast-paths-off-'));
afterAll(async () => {
  await killAllChildServices();
  rmSync(dir, { recursive: true, force: true });
});

/** The source files (src/…) behind the files the built service loaded to start and answer a few requests. */
async function sourcesLoaded(name: string, env: Record<string, string>): Promise<string[]> {
  const files = await filesLoadedByService(dir, name, env, async (baseUrl) => {
    const token = await login(baseUrl);
    const headers = { authorization: token, 'content-type': 'application/json' };
    const created = await fetch(`${baseUrl}/book`, { method: 'POST', headers, body: JSON.stringify({ title: 'T', author: 'A', year: 2000 }) });
    expect(created.status).toBe(201);
    expect((await fetch(`${baseUrl}/books`, { headers })).status).toBe(200);
    expect((await fetch(`${baseUrl}/metrics`)).status).toBe(200);
  });
  return files.flatMap((file) => {
    if (file.includes('/node_modules/')) return []; // packages have dist/ and src/ folders of their own
    if (!file.includes('/dist/') || !file.endsWith('.js')) return file.includes('/src/') ? [file.slice(file.lastIndexOf('/src/') + 1)] : [];
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    return map.sources.flatMap((source) => /(?:^|\/)(src\/.+)$/.exec(source)?.[1] ?? []);
  });
}

describe('FAST_PATHS=off', () => {
  it('the built service loads no module of src/fast/; with the paths on, the same check finds them', async () => {
    const off = await sourcesLoaded('off', { FAST_PATHS: 'off' });
    expect(off).toContain('src/app.ts');
    expect(off.filter((source) => source.startsWith('src/fast/'))).toEqual([]);

    const on = await sourcesLoaded('on', { FAST_PATHS: 'on' });
    expect(on).toContain('src/fast/index.ts');
  });
});
