// The session on the page: the sign-in form, the calls made with the token, and the session's
// end (its 15 minutes are over, the service answers 401, or Sign out), which brings the sign-in
// form back while the other forms keep what was typed in them. The token itself is kept by
// session.ts; what the collection does as a session begins and ends is app.ts's (SessionHooks).
import { call, type Answer } from './api.js';
import { elements as ui } from './elements.js';
import { describe, messageOf } from './messages.js';
import { restoreSession, saveSession, sessionFor, type Session } from './session.js';

const NOTE_EXPIRED = 'Your session has ended: a sign-in lasts 15 minutes. Sign in again to carry on; what you typed is kept.';
const NOTE_REFUSED = 'The service no longer accepts your session. Sign in again to carry on; what you typed is kept.';
const NOTE_SIGNED_OUT = 'You have signed out.';

export interface SessionHooks {
  /** Signed in: show the collection. True if it opened again a dialog the last session's end closed (the focus is then there). */
  began(): Promise<boolean>;
  /** The session ended, the sign-in form comes next: close any dialog, remembering which. */
  ended(): void;
}

/** Set by startSessions, before any session can begin. */
let hooks: SessionHooks = { began: () => Promise.resolve(false), ended: () => undefined };
let current: Session | undefined;
let expiryTimer: number | undefined;
/** Where the focus was when the session ended: it goes back there after sign-in. */
let returnFocus: HTMLElement | undefined;

export function signedIn(): boolean {
  return current !== undefined;
}

/** The page's start: the session this tab had before a reload, or the sign-in form. */
export function startSessions(given: SessionHooks): void {
  hooks = given;
  const restored = restoreSession();
  if (restored === undefined) showSignIn('');
  else if (restored === 'expired') showSignIn(NOTE_EXPIRED);
  else startSession(restored);
}

export function signOut(): void {
  endSession(NOTE_SIGNED_OUT);
}

/**
 * A call with the token. Undefined when the session is over: it had expired, or the service
 * answered 401; either way the sign-in form is back and the caller's form is left as it is.
 */
export function authorized<T>(
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
  signal?: AbortSignal,
): Promise<Answer<T> | undefined> {
  return withToken((token) => call<T>(method, path, { token, body, extraHeaders: headers, signal }));
}

/** A GET whose answer is read as it arrives (the change feed, changes.ts), as `authorized`. */
export function authorizedStream(path: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response | undefined> {
  return withToken((token) =>
    fetch(path, {
      headers: { ...headers, accept: 'text/event-stream', authorization: `Bearer ${token}` },
      cache: 'no-store',
      credentials: 'omit',
      redirect: 'error',
      signal,
    }),
  );
}

async function withToken<A extends { status: number }>(send: (token: string) => Promise<A>): Promise<A | undefined> {
  const session = current;
  if (!session || session.expiresAt <= Date.now()) {
    endSession(NOTE_EXPIRED);
    return undefined;
  }
  const answer = await send(session.token);
  if (answer.status === 401) {
    if (current === session) endSession(NOTE_REFUSED);
    return undefined;
  }
  return answer;
}

function startSession(session: Session): void {
  current = session;
  saveSession(session);
  window.clearTimeout(expiryTimer);
  expiryTimer = window.setTimeout(() => endSession(NOTE_EXPIRED), Math.max(0, session.expiresAt - Date.now()));
  ui.signIn.hidden = true;
  ui.sessionNote.textContent = '';
  ui.signInError.textContent = '';
  ui.password.value = '';
  ui.collection.hidden = false;
  ui.signOut.hidden = false;
  void hooks.began().then((resumedDialog) => {
    if (!resumedDialog) {
      const back = returnFocus;
      (back && back.isConnected && ui.collection.contains(back) ? back : ui.booksHeading).focus();
    }
    returnFocus = undefined;
  });
}

/** Back to the sign-in form. The forms keep what was typed in them; an open dialog opens again after sign-in. */
function endSession(note: string): void {
  window.clearTimeout(expiryTimer);
  if (document.activeElement instanceof HTMLElement && ui.collection.contains(document.activeElement)) returnFocus = document.activeElement;
  current = undefined;
  saveSession(undefined);
  hooks.ended();
  showSignIn(note);
}

function showSignIn(note: string): void {
  ui.collection.hidden = true;
  ui.signOut.hidden = true;
  ui.signIn.hidden = false;
  ui.sessionNote.textContent = note;
  ui.signInError.textContent = '';
  (ui.username.value === '' ? ui.username : ui.password).focus();
}

ui.signInForm.addEventListener('submit', (event) => {
  event.preventDefault();
  void signIn();
});

async function signIn(): Promise<void> {
  const username = ui.username.value;
  const password = ui.password.value;
  if (username === '' || password === '') {
    ui.signInError.textContent = 'Enter both the username and the password.';
    (username === '' ? ui.username : ui.password).focus();
    return;
  }
  const button = ui.signInForm.querySelector('button');
  if (button) button.disabled = true;
  ui.signInError.textContent = '';
  try {
    const answer = await call<{ token?: unknown }>('POST', '/token', { body: { username, password } });
    const token = answer.data?.token;
    if (answer.status === 200 && typeof token === 'string') {
      startSession(sessionFor(token, answer.date));
      return;
    }
    if (answer.status === 401) ui.signInError.textContent = `Wrong username or password (the service answered “${answer.message}”).`;
    else if (answer.status === 429) {
      const wait = answer.retryAfter === undefined ? 'a minute' : `${answer.retryAfter} second${answer.retryAfter === 1 ? '' : 's'}`;
      ui.signInError.textContent = `Too many failed sign-ins from this address. Wait ${wait}, then try again.`;
    } else ui.signInError.textContent = describe(answer, 'Signing in failed');
    ui.password.select();
    ui.password.focus();
  } catch (error) {
    ui.signInError.textContent = messageOf(error);
  } finally {
    if (button) button.disabled = false;
  }
}

document.addEventListener('visibilitychange', () => {
  // A sleeping laptop delays timers: check the expiry when the tab is seen again.
  if (document.visibilityState === 'visible' && current && current.expiresAt <= Date.now()) endSession(NOTE_EXPIRED);
});
