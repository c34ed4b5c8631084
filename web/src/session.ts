// The sign-in token: in memory, and in this tab's sessionStorage so a reload keeps the session
// (never localStorage, never a cookie: it ends with the tab). The token says when it expires
// (`exp`, 15 minutes after sign-in); the session ends then, or at the first 401, whichever is first.

const STORAGE_KEY = 'book-collection.token';

export interface Session {
  token: string;
  /** When the token expires, in milliseconds since the epoch. */
  expiresAt: number;
}

/** `exp` of a JWT, read without checking the signature (the service checks it). */
function expiryOf(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    const json = atob(payload.replace(/-/g, '+').replace(/_/g, '/'));
    const exp = (JSON.parse(json) as { exp?: unknown }).exp;
    return typeof exp === 'number' && Number.isFinite(exp) ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A session for a new token. Its expiry is counted on this computer's clock, which may be off:
 * the time left is `exp` minus the service's clock (the answer's `Date`), from now. A token whose
 * expiry cannot be read is given the documented 15 minutes.
 */
export function sessionFor(token: string, serverNow: number | undefined): Session {
  const exp = expiryOf(token);
  const now = Date.now();
  if (exp === undefined) return { token, expiresAt: now + 15 * 60 * 1000 };
  // `Date` has whole seconds: a second off the time left, so the page never counts on too much.
  return { token, expiresAt: now + (exp - (serverNow ?? now)) - 1000 };
}

export function saveSession(session: Session | undefined): void {
  try {
    if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
    else sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // Storage refused (a private mode): the session lives in memory only.
  }
}

/** The session this tab had before a reload: undefined if none; `expired` if it has run out. */
export function restoreSession(): Session | 'expired' | undefined {
  let saved: string | null;
  try {
    saved = sessionStorage.getItem(STORAGE_KEY);
  } catch {
    return undefined;
  }
  if (!saved) return undefined;
  let session: Session;
  try {
    const parsed = JSON.parse(saved) as Partial<Session>;
    if (typeof parsed.token !== 'string' || typeof parsed.expiresAt !== 'number') throw new TypeError('not a session');
    session = { token: parsed.token, expiresAt: parsed.expiresAt };
  } catch {
    saveSession(undefined);
    return undefined;
  }
  if (session.expiresAt <= Date.now()) {
    saveSession(undefined);
    return 'expired';
  }
  return session;
}
