// `migrate`: opening the store applies pending migrations; then close and exit. Needs no
// SECRET_TOKEN (it signs nothing), for deploy pipelines that migrate before rolling out.
import { loadConfig } from '../config.js';
import { createLogger } from '../logger.js';
import { openStore } from '../store/open-store.js';

export async function migrate() {
  const config = loadConfig(process.env, process.cwd(), { requireSecret: false });
  const logger = createLogger(config.logLevel);
  const store = await openStore(config.store, logger);
  await store.close();
  logger.info({ url: config.store.description }, 'store schema is up to date');
  logger.flush();
}
