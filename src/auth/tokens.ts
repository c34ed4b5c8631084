// Token issue and verification (HS256, only claim `exp` = issue + 900 s) and the
// constant-time check of the built-in credentials.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

export const TOKEN_LIFETIME_SECONDS = 15 * 60;

/** Verification accepts the HMAC family only (the spec rejects non-HMAC methods). */
export const ACCEPTED_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;

export interface TokenService {
  /** Returns a new token; throws if signing fails. */
  issue(): string;
  /** True when the token is well-formed, HMAC-signed with the secret and not expired. */
  isValid(token: string): boolean;
}

export function createTokenService(secret: string): TokenService {
  const sign = createSigner({
    key: secret,
    algorithm: 'HS256',
    noTimestamp: true, // the spec: `exp` is the only claim
  });
  const verify = createVerifier({
    key: secret,
    algorithms: [...ACCEPTED_ALGORITHMS],
    requiredClaims: ['exp'],
    clockTolerance: 0,
    // Cache keyed by fast-jwt's hash of the whole token; an entry never outlives `exp`.
    cache: 10_000,
    cacheTTL: TOKEN_LIFETIME_SECONDS * 1000,
  });

  // HS256 is deterministic and `exp` is the only claim, so every token issued within the same
  // second is byte-for-byte the same: sign once per second, not once per request.
  let lastExp = 0;
  let lastToken = '';

  return {
    issue() {
      // Computed here rather than with `expiresIn` so that `exp` is exactly issue + 900 s in whole seconds.
      const exp = Math.floor(Date.now() / 1000) + TOKEN_LIFETIME_SECONDS;
      if (exp !== lastExp) {
        lastToken = sign({ exp });
        lastExp = exp;
      }
      return lastToken;
    },
    isValid(token) {
      try {
        const payload: unknown = verify(token);
        // fast-jwt has checked that `exp` is a number in the future. We also want an object
        // payload and a whole-second `exp`, as this service issues (RFC 8725: be strict).
        return (
          typeof payload === 'object' &&
          payload !== null &&
          !Array.isArray(payload) &&
          Number.isSafeInteger((payload as { exp?: unknown }).exp)
        );
      } catch {
        return false;
      }
    },
  };
}

export interface CredentialsChecker {
  matches(username: string, password: string): boolean;
}

/** Compares in constant time: digests have equal length whatever the input, and both fields are always compared. */
export function createCredentialsChecker(username: string, password: string): CredentialsChecker {
  const expectedUser = digest(username);
  const expectedPassword = digest(password);
  return {
    matches(givenUser, givenPassword) {
      const userOk = timingSafeEqual(digest(givenUser), expectedUser);
      const passwordOk = timingSafeEqual(digest(givenPassword), expectedPassword);
      return userOk && passwordOk;
    },
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
