// Answer half-closed clients. A client may send its request and then shut down its sending
// side (TCP FIN: HTTP/1.0 clients, `nc -N`, some proxies). By default Node's server answers
// the FIN by ending the socket (Node 22+ also aborts the requests in flight): an answer that
// is not written by then is lost, though the request may well have run (a book stored, no
// 201). With answers given a turn later (turns.ts), and after store queries, that is most
// answers. So the server is told to keep answering.
//
// How: `httpAllowHalfOpen`, an undocumented property of http.Server (since Node 0.x; the same
// in Node 20, 22 and 24: lib/_http_server.js, socketOnEnd). The sockets are already half-open
// capable (http.Server is a net.Server with allowHalfOpen: true); this flag decides what the
// HTTP layer does on the client's FIN:
//  - false (Node's default): end our side at once (Node 22+ also aborts the requests in
//    flight). Answers not yet written are lost.
//  - true: mark the last pending response as the connection's last (`_last`); once it is
//    written Node calls socket.destroySoon() (FIN after the answers, then close:
//    lingering-close.ts's patched destroySoon applies as for any closing answer), and answers
//    queued behind it (pipelined requests) go out first. With nothing pending (an idle
//    keep-alive connection) Node ends the socket at once, so none is left half-open.
// A FIN in the middle of a request (headers or body cut off) is unchanged: Node's parser
// reports it as a client error first (client-error.ts, then src/http/errors.ts).
// If a Node version drops the property, setting it does nothing and the default comes back.
//
// Switched off: Node's default (false above).
import type { Server } from 'node:http';

/** Answer every request a client sent before half-closing its connection, then close it. */
export function answerHalfClosedClients(server: Server) {
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
}
