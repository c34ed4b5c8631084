/**
 * A failure the user can fix (a setting, an unreachable store, a port in use): the service
 * prints its message as one line and exits 1, without a stack trace. ConfigError and
 * StoreStartupError are kinds of it.
 */
export class StartupError extends Error {
  override name = 'StartupError';
}
