// How a process is asked to stop: SIGTERM/SIGINT, or (a cluster worker) a message from the primary.

/** Sent by the primary to each worker instead of a signal (see supervise.ts). */
export const STOP_MESSAGE = 'book-service:shutdown';

/** The same signal again within this time is the same request delivered twice. */
export const DUPLICATE_SIGNAL_WINDOW_MS = 1_000;

/**
 * SIGTERM/SIGINT: the first starts a graceful stop, a second one forces the exit. The same
 * signal again within a second is ignored: Ctrl-C under `npm start` reaches the service from
 * the terminal and again from npm, which forwards it.
 */
export function onStopSignals(stopGracefully: (signal: NodeJS.Signals) => void, stopNow: (signal: NodeJS.Signals) => void) {
  let first: { signal: NodeJS.Signals; at: number } | undefined;
  const handle = (signal: NodeJS.Signals) => {
    if (first === undefined) {
      first = { signal, at: Date.now() };
      stopGracefully(signal);
    } else if (signal !== first.signal || Date.now() - first.at >= DUPLICATE_SIGNAL_WINDOW_MS) {
      stopNow(signal);
    }
  };
  process.on('SIGTERM', handle);
  process.on('SIGINT', handle);
}

/**
 * A cluster worker: listens for the primary's stop message from the moment the worker starts,
 * so that one sent while the worker is still starting (opening its store, waiting for another
 * one's migrations) is not lost: it is carried out as soon as the worker hands over how to stop.
 */
export function listenForStopMessage(): (stop: () => void) => void {
  let requested = false;
  let stop: (() => void) | undefined;
  process.on('message', (message) => {
    if (message !== STOP_MESSAGE) return;
    if (stop) stop();
    else requested = true;
  });
  return (handler) => {
    stop = handler;
    if (requested) handler();
  };
}
