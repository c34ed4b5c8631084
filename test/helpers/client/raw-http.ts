// HTTP/1.1 over a bare node:net socket, for requests that fetch() will not send (arbitrary
// header bytes, malformed paths, huge headers, slow or chunked bodies) and for telling a
// clean close from a dropped connection. One request per connection (`Connection: close`).
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  /** Lower-case header names; repeated headers are joined with ", ". */
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  /** The first complete response on the socket, or undefined when none arrived in full. */
  response: RawResponse | undefined;
  /** Every byte the server sent. */
  received: Buffer;
  /** True when the server ended or reset the connection before the timeout. */
  closed: boolean;
  /** Socket error code seen on the client side (ECONNRESET, EPIPE, ...), if any. */
  error: string | undefined;
  /** Milliseconds from connect to close (or to the timeout). */
  elapsedMs: number;
}

export interface RawExchangeOptions {
  timeoutMs?: number;
  host?: string;
  /** The client's own address (e.g. 127.0.0.2: another loopback client, for a proxy in front). */
  localAddress?: string;
  /**
   * Keep reading until the server closes (or the timeout), rather than resolving on the
   * first complete response. Needed to observe whether and when the server closes.
   */
  untilClose?: boolean;
  /** The request was HEAD: the response has headers only. */
  head?: boolean;
}

/**
 * Connects, lets `send` write whatever it wants (it may wait between writes), and collects
 * everything the server sends until it closes the connection or `timeoutMs` passes.
 */
export function rawExchange(
  port: number,
  send: (socket: Socket) => void | Promise<void>,
  { timeoutMs = 10_000, host = '127.0.0.1', localAddress, untilClose = false, head = false }: RawExchangeOptions = {},
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    let settled = false;
    const socket = connect({ port, host, localAddress });
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const received = Buffer.concat(chunks);
      resolve({ response: parseResponse(received, { head, closed }), received, closed, error, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      // Complete response on a connection the server keeps open: done (the socket is ours to close).
      if (!untilClose && parseResponse(Buffer.concat(chunks), { head, closed: false }) !== undefined) finish(false);
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    socket.on('close', () => finish(true));
    socket.once('connect', () => {
      Promise.resolve()
        .then(() => send(socket))
        .catch((err: NodeJS.ErrnoException) => {
          // Writing after the server closed: the outcome is whatever it sent before.
          error ??= err.code ?? err.message;
        });
    });
  });
}

export interface RawRequest {
  method: string;
  /** Sent as is on the request line: no encoding, no normalisation. */
  path: string;
  /** Sent as is, in order. Host and Connection: close are added unless given. */
  headers?: Array<[string, string | Buffer]>;
  body?: string | Buffer;
  /** Send the body with Transfer-Encoding: chunked instead of Content-Length. */
  chunked?: boolean;
}

/** Serialises a request exactly, header bytes included (latin1 for strings). */
export function requestBytes(request: RawRequest): Buffer {
  const headers = request.headers ?? [];
  const names = new Set(headers.map(([name]) => name.toLowerCase()));
  const parts: Buffer[] = [Buffer.from(`${request.method} ${request.path} HTTP/1.1\r\n`, 'latin1')];
  const header = (name: string, value: string | Buffer) =>
    parts.push(Buffer.concat([Buffer.from(`${name}: `, 'latin1'), typeof value === 'string' ? Buffer.from(value, 'latin1') : value, Buffer.from('\r\n')]));
  if (!names.has('host')) header('Host', 'localhost');
  if (!names.has('connection')) header('Connection', 'close');
  for (const [name, value] of headers) header(name, value);
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  if (body !== undefined && request.chunked) {
    header('Transfer-Encoding', 'chunked');
    parts.push(Buffer.from('\r\n'));
    if (body.length > 0) parts.push(Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n'));
    parts.push(Buffer.from('0\r\n\r\n'));
  } else {
    if (body !== undefined && !names.has('content-length')) header('Content-Length', String(body.length));
    parts.push(Buffer.from('\r\n'));
    if (body !== undefined) parts.push(body);
  }
  return Buffer.concat(parts);
}

/** One request on a fresh connection. */
export function rawRequest(port: number, request: RawRequest, options: RawExchangeOptions = {}): Promise<RawExchange> {
  const bytes = requestBytes(request);
  return rawExchange(port, (socket) => void socket.write(bytes), { head: request.method === 'HEAD', ...options });
}

export interface HalfClosedExchange {
  /** Every complete response, in order. */
  responses: RawResponse[];
  /** Bytes after the last complete response: a cut-off response, or nothing. */
  rest: Buffer;
  /** True when the server closed the connection before the timeout. */
  closed: boolean;
  /** Socket error code seen on the client side, if any. */
  error: string | undefined;
  elapsedMs: number;
  /** The client's port: the server-side socket's remotePort. */
  localPort: number | undefined;
}

/**
 * Sends `bytes` (one request, several pipelined, or a cut-off one), then shuts down the
 * sending side (TCP FIN) as HTTP/1.0 clients, `nc -N` and some proxies do, and reads until the
 * server closes the connection or `timeoutMs` passes.
 */
export function halfClosedExchange(port: number, bytes: Buffer, { timeoutMs = 5_000, host = '127.0.0.1' } = {}): Promise<HalfClosedExchange> {
  return new Promise((resolve) => {
    const started = Date.now();
    const chunks: Buffer[] = [];
    let error: string | undefined;
    // allowHalfOpen: our side stays open for reading once we have sent our FIN (the default
    // would do too, but this way a close is always the server's decision).
    const socket = connect({ port, host, allowHalfOpen: true });
    let settled = false;
    const finish = (closed: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ ...parseResponses(Buffer.concat(chunks), { closed }), closed, error, elapsedMs: Date.now() - started, localPort });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      error ??= err.code ?? err.message;
    });
    // The server's FIN (or reset): nothing more will come.
    socket.once('end', () => finish(true));
    socket.once('close', () => finish(true));
    let localPort: number | undefined;
    socket.once('connect', () => {
      localPort = socket.localPort;
      socket.end(bytes);
    });
  });
}

/**
 * Each request on a connection of its own: the connections opened first, then every request
 * written in one go, so that the service reads them in one turn of its event loop and answers
 * them together (src/fast/answer-in-turns.ts). The exchanges, in the order of `requests`.
 */
export async function sendTogether(baseUrl: string, requests: readonly RawRequest[], { timeoutMs = 20_000 } = {}): Promise<RawExchange[]> {
  let connected = 0;
  let allConnected!: () => void;
  const connecting = new Promise<void>((resolve) => (allConnected = resolve));
  let sendAll!: () => void;
  const sending = new Promise<void>((resolve) => (sendAll = resolve));
  const exchanges = requests.map((request) => {
    const bytes = requestBytes(request);
    return rawExchange(
      portOf(baseUrl),
      async (socket) => {
        if (++connected === requests.length) allConnected();
        await sending;
        socket.write(bytes);
      },
      { timeoutMs, head: request.method === 'HEAD' },
    );
  });
  await connecting;
  await new Promise((resolve) => setTimeout(resolve, 100)); // every connection accepted, in turns of its own
  // The first batch after connections were accepted is a small one (turns.ts); one request
  // answered now makes the next batch a full one.
  await fetch(`${baseUrl}/healthz`);
  sendAll();
  return Promise.all(exchanges);
}

/** Port of a base URL such as http://127.0.0.1:1234. */
export function portOf(baseUrl: string): number {
  return Number(new URL(baseUrl).port);
}

/**
 * Parses the first final (non-1xx) HTTP/1.x response in `bytes`. Undefined unless the status
 * line, the headers and the whole body (Content-Length, chunked, or up to the close) are there.
 */
export function parseResponse(
  bytes: Buffer,
  { head = false, closed = true }: { head?: boolean; closed?: boolean } = {},
): RawResponse | undefined {
  return parseOne(bytes, { head, closed })?.response;
}

/**
 * Every complete response in `bytes`, in order (pipelined answers), and the bytes after the
 * last of them: a partial response, or nothing. HEAD answers cannot be told apart here.
 */
export function parseResponses(bytes: Buffer, { closed = true }: { closed?: boolean } = {}): { responses: RawResponse[]; rest: Buffer } {
  const responses: RawResponse[] = [];
  let rest = bytes;
  for (;;) {
    const parsed = parseOne(rest, { head: false, closed });
    if (parsed === undefined) return { responses, rest };
    responses.push(parsed.response);
    rest = rest.subarray(parsed.length);
    if (rest.length === 0) return { responses, rest };
  }
}

/** The first final response in `bytes` and how many bytes it took (interim responses included). */
function parseOne(bytes: Buffer, { head, closed }: { head: boolean; closed: boolean }): { response: RawResponse; length: number } | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) return undefined;
  // Interim responses (100 Continue) come first; the final response follows them.
  if (/^HTTP\/1\.[01] 1\d\d\b/.test(bytes.subarray(0, 16).toString('latin1'))) {
    const final = parseOne(bytes.subarray(headEnd + 4), { head, closed });
    return final && { response: final.response, length: headEnd + 4 + final.length };
  }
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const match = /^HTTP\/1\.[01] (\d{3})(?: .*)?$/.exec(statusLine);
  if (!match) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) return undefined;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  }
  const bodyStart = headEnd + 4;
  const rest = bytes.subarray(bodyStart);
  let body: Buffer;
  let bodyLength: number;
  if (head) {
    body = Buffer.alloc(0);
    bodyLength = 0;
  } else if (/\bchunked\b/i.test(headers['transfer-encoding'] ?? '')) {
    const decoded = dechunk(rest);
    if (decoded === undefined) return undefined;
    ({ body, length: bodyLength } = decoded);
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || rest.length < length) return undefined;
    body = rest.subarray(0, length);
    bodyLength = length;
  } else {
    // Delimited by the close.
    if (!closed) return undefined;
    body = rest;
    bodyLength = rest.length;
  }
  return { response: { status: Number(match[1]), headers, body: body.toString('utf8') }, length: bodyStart + bodyLength };
}

/** A chunked body (without trailers) and how many bytes it took. */
function dechunk(bytes: Buffer): { body: Buffer; length: number } | undefined {
  const out: Buffer[] = [];
  let offset = 0;
  for (;;) {
    const lineEnd = bytes.indexOf('\r\n', offset);
    if (lineEnd < 0) return undefined;
    const size = parseInt(bytes.subarray(offset, lineEnd).toString('latin1').split(';')[0] ?? '', 16);
    if (!Number.isFinite(size)) return undefined;
    if (size === 0) {
      if (bytes.length < lineEnd + 4) return undefined;
      return { body: Buffer.concat(out), length: lineEnd + 4 };
    }
    const start = lineEnd + 2;
    if (bytes.length < start + size + 2) return undefined;
    out.push(bytes.subarray(start, start + size));
    offset = start + size + 2;
  }
}
