// Token issue and verification (HS256, only claim `exp` = issue + 900 s) and the
// constant-time check of the built-in credentials.
import { hash, timingSafeEqual } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

const TOKEN_LIFETIME_SECONDS = 15 * 60;

/** Verification accepts the HMAC family only (docs/api.md: non-HMAC methods are refused). */
const ACCEPTED_ALGORITHMS = ['HS256', 'HS384', 'HS512'] as const;

export interface TokenService {
  /** Returns a new token; throws if signing fails. */
  issue(): string;
  /** True when the token is well-formed, HMAC-signed with the secret and not expired. */
  isValid(token: string): boolean;
}

/** `verified`: tokens that passed, remembered by a speed path (FastPaths.verifiedTokens); without it every token is verified. */
/** Tokens that passed verification, remembered until their `exp` (the speed path token-cache, src/seams.ts). */
export interface VerifiedTokens {
  /** true: verified and not expired; false: verified but expired now; undefined: not known. */
  lookup(token: string): boolean | undefined;
  /** `token` passed verification and is valid up to `expiresAtMs` (its `exp`, in ms). */
  remember(token: string, expiresAtMs: number): void;
}

/**
 * Signs with `secret`; verifies with it, then with each of `verifyOnly` (SECRET_TOKEN_PREVIOUS:
 * while SECRET_TOKEN changes, tokens signed with the other one stay valid until they expire).
 */
export function createTokenService(secret: string, verified?: VerifiedTokens, verifyOnly: readonly string[] = []): TokenService {
  const sign = createSigner({
    key: secret,
    algorithm: 'HS256',
    noTimestamp: true, // `exp` is the only claim (docs/api.md "Authentication")
  });
  const verifiers = [secret, ...verifyOnly].map((key) =>
    createVerifier({ key, algorithms: [...ACCEPTED_ALGORITHMS], requiredClaims: ['exp'], clockTolerance: 0 }),
  );
  /** The payload of a token one of the secrets signed; throws when none did (or it is not valid). */
  const verify = (token: string): unknown => {
    let refusal: unknown;
    for (const verifyWith of verifiers) {
      try {
        return verifyWith(token);
      } catch (error) {
        refusal ??= error;
      }
    }
    throw refusal;
  };

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
      const known = verified?.lookup(token);
      if (known !== undefined) return known;
      let exp: unknown;
      try {
        const payload: unknown = verify(token);
        if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) return false;
        exp = (payload as { exp?: unknown }).exp;
      } catch {
        return false;
      }
      // fast-jwt has checked that `exp` is a number in the future. We also want a whole-second
      // `exp`, as this service issues (RFC 8725: be strict).
      if (!Number.isSafeInteger(exp)) return false;
      verified?.remember(token, (exp as number) * 1000);
      return true;
    },
  };
}

export interface CredentialsChecker {
  matches(username: string, password: string): boolean;
}

/**
 * Compares in constant time: one SHA-256 digest of both fields (length-prefixed, so no other
 * pair encodes the same: `a` + `b\0c` is not `a\0b` + `c`), always of both, has the same
 * length whatever the input, and timingSafeEqual compares it with the expected one. One
 * digest instead of one per field: half the hashing on every login (what the digests cost:
 * docs/benchmarks-changes.md).
 */
export function createCredentialsChecker(username: string, password: string): CredentialsChecker {
  const expected = digest(username, password);
  return {
    matches(givenUser, givenPassword) {
      return timingSafeEqual(digest(givenUser, givenPassword), expected);
    },
  };
}

/** One-shot SHA-256 of both fields: no Hash object per call, cheaper than createHash (docs/benchmarks-changes.md). */
function digest(username: string, password: string): Buffer {
  return hash('sha256', `${username.length}:${username}${password}`, 'buffer');
}
