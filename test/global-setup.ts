// Builds dist/ once before the suites, as `npm run build` does: the startup tests run the built
// entry point exactly as `npm start` does.
// Also starts, in the background, the private 3-node Galera cluster that the `galera` copies of
// the contract suites share (test/helpers/stores/for-each-store.ts); workers get its ports through
// `inject('sharedGalera')` and wait for it to be Synced. Not started when DIALECTS leaves
// galera out or the run's file filters select no contract suite.
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { TestProject } from 'vitest/node';
import { privateGaleraUnavailable, startPrivateGalera, type PrivateGalera } from './helpers/infra/galera-cluster.js';
import { GALERA_SELECTED, GALERA_SUITES, type SharedGalera } from './helpers/stores/dialects.js';

export default async function setup(project: TestProject) {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  // As `npm run build` does: the service's bundle, the web page, then the page's files beside it.
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: 'inherit' });
  execFileSync(process.execPath, [tsc, '-b', 'web'], { stdio: 'inherit' });
  execFileSync(process.execPath, ['web/copy-files.mjs'], { stdio: 'inherit' });

  const galera = await startSharedGalera(project);
  return async () => {
    await galera?.starting.then((cluster) => cluster.destroy()).catch(() => undefined);
  };
}

/** Starts the shared cluster in the background, provides its ports, returns the startup. */
async function startSharedGalera(project: TestProject): Promise<{ starting: Promise<PrivateGalera> } | undefined> {
  if (!GALERA_SELECTED || !filtersSelectGaleraSuite(project)) {
    project.provide('sharedGalera', { unavailable: 'not started for this run (DIALECTS or the file filters select no galera suite)' });
    return undefined;
  }
  const unavailable = privateGaleraUnavailable();
  if (unavailable !== undefined) {
    project.provide('sharedGalera', { unavailable });
    return undefined;
  }
  let handOut: (provided: SharedGalera) => void = () => undefined;
  const portsKnown = new Promise<SharedGalera>((resolve) => (handOut = resolve));
  const began = Date.now();
  const starting = startPrivateGalera({ onNodes: (nodes) => handOut({ ports: nodes.map((node) => node.port) }) });
  starting.then(
    (cluster) => console.info(`[global setup] shared Galera cluster Synced in ${Date.now() - began} ms (ports ${cluster.nodes.map((node) => node.port).join(', ')})`),
    (error: unknown) => console.error(`[global setup] the shared Galera cluster did not start: ${(error as Error).message}`),
  );
  project.provide('sharedGalera', await Promise.race([portsKnown, starting.then((cluster) => ({ ports: cluster.nodes.map((node) => node.port) }))]));
  return { starting };
}

/** False when the run names files (vitest run <filter>…) and no contract suite matches any filter. */
function filtersSelectGaleraSuite(project: TestProject): boolean {
  // Vitest's own list of the CLI file filters (internal; absent: assume a full run).
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  if (!filters || filters.length === 0) return true;
  const root = project.config.root;
  const candidates = readdirSync(`${root}/test`, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => `${root}/test/${file}`)
    .filter((file) => GALERA_SUITES.test(file));
  return candidates.some((file) => filters.some((filter) => file.includes(filter.replace(/^\.\//, ''))));
}
