// src/auth/tokens.ts: issue and verify, outside HTTP; with the speed path token-cache
// (src/fast/token-cache.ts), verified tokens remembered safely.
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCredentialsChecker, createTokenService } from '../../src/auth/tokens.js';
import { createVerifiedTokenCache, verifiedTokenCache } from '../../src/fast/token-cache.js';
import { fastPaths } from '../helpers/node-http.js';

const SECRET = 'unit-test-secret-that-is-32-bytes-or-more';

afterEach(() => vi.useRealTimers());

describe('token service', () => {
  it('issues HS256 tokens whose only claim is exp = now + 900 s, and verifies them', () => {
    vi.useFakeTimers({ now: new Date('2026-11-21T12:00:00.250Z'), toFake: ['Date'] });
    const tokens = createTokenService(SECRET);
    const token = tokens.issue();
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decodeJwt(token)).toEqual({ exp: Date.UTC(2026, 10, 21, 12, 15, 0) / 1000 });
    expect(tokens.isValid(token)).toBe(true);
  });

  it('tokens issued within one second are identical (signed once); the next second gets a new exp', () => {
    vi.useFakeTimers({ now: new Date('2026-11-21T12:00:00.100Z'), toFake: ['Date'] });
    const tokens = createTokenService(SECRET);
    const first = tokens.issue();
    vi.setSystemTime(new Date('2026-11-21T12:00:00.900Z'));
    expect(tokens.issue()).toBe(first);
    vi.setSystemTime(new Date('2026-11-21T12:00:01.000Z'));
    const next = tokens.issue();
    expect(next).not.toBe(first);
    expect(decodeJwt(next).exp).toBe((decodeJwt(first).exp as number) + 1);
  });

  it('a token from another secret is not valid', () => {
    expect(createTokenService(SECRET).isValid(createTokenService(`${SECRET}-other`).issue())).toBe(false);
  });
});

/** Checks a token of the service `makeTokens` makes is valid up to and including its exp millisecond, and not after, twice each. */
function validUpToExp(makeTokens: () => ReturnType<typeof createTokenService>) {
  vi.useFakeTimers({ now: new Date('2026-11-21T12:00:00.000Z'), toFake: ['Date'] });
  const tokens = makeTokens(); // after faking Date: the cache reads the clock it was made with
  const token = tokens.issue();
  expect(tokens.isValid(token)).toBe(true); // verified (with the cache: now remembered)
  expect(tokens.isValid(token)).toBe(true); // (with the cache: from it)
  vi.setSystemTime(new Date('2026-11-21T12:15:00.000Z')); // exactly exp: still valid, as fast-jwt
  expect(tokens.isValid(token)).toBe(true);
  vi.setSystemTime(new Date('2026-11-21T12:15:00.001Z'));
  expect(tokens.isValid(token)).toBe(false);
  expect(tokens.isValid(token)).toBe(false); // (with the cache: not after it was forgotten either)
}

describe('expiry', () => {
  it('a token stops being valid the millisecond after its exp', () => validUpToExp(() => createTokenService(SECRET)));
});

// Tests of the speed path itself: skipped when FAST_PATHS turns token-cache off.
describe.skipIf(!fastPaths.has('token-cache'))('verified tokens are remembered safely (token-cache)', () => {
  it('a remembered token stops being valid the millisecond after its exp', () => validUpToExp(() => createTokenService(SECRET, verifiedTokenCache())));

  it('keys are whole tokens: a remembered token does not vouch for one that differs in its last character', () => {
    const tokens = createTokenService(SECRET, verifiedTokenCache());
    const token = tokens.issue();
    expect(tokens.isValid(token)).toBe(true);
    // The last of the signature's 43 base64url characters carries 4 bits and 2 unused ones
    // (A and B decode alike); flipping its top bit changes a signature bit every time.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet[alphabet.indexOf(token.at(-1)!) ^ 32]!;
    expect(tokens.isValid(token.slice(0, -1) + last)).toBe(false);
    expect(tokens.isValid(`${token}x`)).toBe(false);
  });

  it('is bounded: the oldest entry is forgotten first', () => {
    const cache = createVerifiedTokenCache(3, () => 0);
    for (const token of ['a', 'b', 'c', 'd']) cache.remember(token, 1000);
    expect(cache.size).toBe(3);
    expect(cache.lookup('a')).toBeUndefined();
    expect(cache.lookup('d')).toBe(true);
  });

  it('failed verifications are not remembered: the cache holds only tokens that passed', () => {
    const cache = createVerifiedTokenCache(10);
    const tokens = createTokenService(SECRET, cache);
    const forged = createTokenService(`${SECRET}-other`).issue();
    vi.useFakeTimers({ now: new Date('2026-11-21T12:00:00Z'), toFake: ['Date'] });
    const expired = tokens.issue();
    vi.setSystemTime(new Date('2026-11-21T12:16:00Z'));
    for (const bad of [forged, expired, 'not.a.token', '']) expect(tokens.isValid(bad), bad).toBe(false);
    expect(cache.size).toBe(0);
    expect(tokens.isValid(tokens.issue())).toBe(true);
    expect(cache.size).toBe(1);
  });
});

describe('credentials', () => {
  it('matches only the exact pair', () => {
    const credentials = createCredentialsChecker('admin', 'secret');
    expect(credentials.matches('admin', 'secret')).toBe(true);
    expect(credentials.matches('admin', 'Secret')).toBe(false);
    expect(credentials.matches('Admin', 'secret')).toBe(false);
    expect(credentials.matches('admin', 'secret ')).toBe(false);
    expect(credentials.matches('', '')).toBe(false);
  });
});
