import { StartupError } from '../startup-error.js';

/** A store that cannot be opened, reached or migrated: the service does not start. */
export class StoreStartupError extends StartupError {
  override name = 'StoreStartupError';
}
