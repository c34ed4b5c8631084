// Ignore unknown Expect: for an `Expect` other than 100-continue, Node answers a bare 417
// before any hook runs. RFC 9110 lets a server ignore it, so the request is served as usual
// (auth first, the envelope), by handing it to the server's 'request' listeners.
//
// Switched off: Node's default, the bare 417 (no envelope, no security headers).
import type { Server } from 'node:http';

export function ignoreUnknownExpect(server: Server) {
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}
