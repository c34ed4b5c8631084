// Token forging for the authentication, leak and fuzz tests: well-formed tokens that the service
// must accept, and every kind of bad token it must refuse. Built with jose where jose can
// build them, by hand (node:crypto) where a token is deliberately malformed.
import { createHmac } from 'node:crypto';
import { SignJWT, UnsecuredJWT, generateKeyPair, type JWTPayload } from 'jose';
import { TEST_SECRET } from './test-account.js';

/** A different secret of the same length class (≥ 32 bytes). */
export const WRONG_SECRET = 'not-the-service-secret-but-just-as-long!!!!';

export type HmacAlgorithm = 'HS256' | 'HS384' | 'HS512';

const HASH_OF: Record<HmacAlgorithm, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** exp comfortably in the future (the service's own lifetime). */
export function futureExp(): number {
  return nowSeconds() + 900;
}

export function base64url(input: string | Uint8Array): string {
  return Buffer.from(input).toString('base64url');
}

/** An HMAC-signed JWT through jose (header `{alg, typ: "JWT"}`). */
export async function signHmac(claims: JWTPayload, alg: HmacAlgorithm = 'HS256', secret: string = TEST_SECRET): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

/**
 * Signs any header over any payload text (which need not be a JSON object) with HMAC over
 * `secret`, whatever `alg` the header claims. `hash` picks the HMAC hash actually used.
 */
export function hmacToken(
  header: Record<string, unknown>,
  payloadJson: string,
  { secret = TEST_SECRET, hash = 'sha256' }: { secret?: string; hash?: string } = {},
): string {
  const input = `${base64url(JSON.stringify(header))}.${base64url(payloadJson)}`;
  const signature = createHmac(hash, secret).update(input).digest('base64url');
  return `${input}.${signature}`;
}

/** Same as signHmac but built by hand, for headers jose would not write. */
export function hmacTokenFor(alg: HmacAlgorithm, payload: unknown): string {
  return hmacToken({ alg, typ: 'JWT' }, JSON.stringify(payload), { hash: HASH_OF[alg] });
}

/** `alg: none`, as jose writes it: `header.payload.` (empty signature). */
export function unsecuredToken(claims: JWTPayload): string {
  return new UnsecuredJWT(claims).encode();
}

/** A real RS256 token from a freshly generated RSA key pair. */
export async function rs256Token(claims: JWTPayload): Promise<string> {
  const { privateKey } = await generateKeyPair('RS256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT' }).sign(privateKey);
}

/** A real ES256 token from a freshly generated P-256 key pair. */
export async function es256Token(claims: JWTPayload): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256');
  return new SignJWT(claims).setProtectedHeader({ alg: 'ES256', typ: 'JWT' }).sign(privateKey);
}

/** Flips the lowest bit of the first signature byte (decoded, so the change is real, not a base64 padding bit). */
export function flipSignatureBit(token: string): string {
  const [header, payload, signature] = token.split('.');
  if (header === undefined || payload === undefined || signature === undefined) throw new Error('not a JWS');
  const bytes = Buffer.from(signature, 'base64url');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  return `${header}.${payload}.${bytes.toString('base64url')}`;
}

/** Header and payload of a token, without its signature part (`header.payload`). */
export function withoutSignaturePart(token: string): string {
  return token.split('.').slice(0, 2).join('.');
}
