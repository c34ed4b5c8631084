// The verified-token cache (the speed path token-cache): a token that passed verification is
// remembered until its `exp`, so the next request with it costs a Map lookup instead of an HMAC.
// Plugged in through FastPaths.verifiedTokens (src/seams.ts), consulted by the token service's
// isValid (src/auth/tokens.ts), where it stands in for verifying every token with fast-jwt.
//
// Why not fast-jwt's own cache (`cache` in createVerifier): it hashes the token with SHA-256 to
// key its entry, a digest per request where this is one lookup by the token text. (No A/B of
// this path alone is recorded in docs/benchmarks-changes.md; the integrator's bench measures it.)
//
// Safe by construction: keyed by the whole token text (no digest, so two tokens can never share
// an entry), each until its `exp` with fast-jwt's own boundary, bounded (the oldest entry goes
// first), and only successes are kept, so garbage tokens cannot crowd out good ones.
import type { VerifiedTokens } from '../auth/tokens.js';

/** Verified tokens remembered at once; the oldest is forgotten first. */
export const VERIFIED_TOKEN_CACHE_SIZE = 10_000;

/** The token service's cache (FastPaths.verifiedTokens). */
export function verifiedTokenCache(): VerifiedTokens {
  return createVerifiedTokenCache(VERIFIED_TOKEN_CACHE_SIZE);
}

export type VerifiedTokenCache = ReturnType<typeof createVerifiedTokenCache>;

export function createVerifiedTokenCache(maxEntries: number, now: () => number = Date.now) {
  const expiresAtMs = new Map<string, number>();
  return {
    /** true: verified and not expired; false: verified but expired now; undefined: not known. */
    lookup(token: string): boolean | undefined {
      const expiresAt = expiresAtMs.get(token);
      if (expiresAt === undefined) return undefined;
      // The same boundary as fast-jwt: valid up to and including the `exp` millisecond.
      if (now() <= expiresAt) return true;
      expiresAtMs.delete(token);
      return false;
    },
    remember(token: string, expiresAt: number): void {
      if (expiresAtMs.size >= maxEntries) {
        const oldest = expiresAtMs.keys().next().value;
        if (oldest !== undefined) expiresAtMs.delete(oldest);
      }
      expiresAtMs.set(token, expiresAt);
    },
    get size() {
      return expiresAtMs.size;
    },
  };
}
