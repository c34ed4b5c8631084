// The security headers every answer carries, the ones written by hand for raw client errors too.

/**
 * On every answer: JSON needs no active content. The /docs page replaces the policy with its
 * own on its own routes (src/plugins/external/api-reference.ts).
 */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
} as const;
