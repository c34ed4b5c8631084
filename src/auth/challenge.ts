// The WWW-Authenticate challenge every 401 carries (RFC 9110 §11.6.1 requires one): the Bearer
// scheme of RFC 6750, which the book routes take (`Authorization: Bearer <token>`, or the token
// alone). A token that was sent and refused adds `error="invalid_token"`; a request without one
// gets no error code (RFC 6750 §3.1), and neither does POST /token's refused login, whose
// credentials travel in the body, not in a header.
export const REALM = 'book-collection';

export function bearerChallenge(tokenRefused: boolean): string {
  return tokenRefused ? `Bearer realm="${REALM}", error="invalid_token"` : `Bearer realm="${REALM}"`;
}
