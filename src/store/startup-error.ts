/** A store that cannot be opened, reached or migrated: the service does not start. */
export class StoreStartupError extends Error {
  override name = 'StoreStartupError';
}
