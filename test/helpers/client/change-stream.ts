// A client of GET /books/changes over a real connection (node:http): reads the server-sent
// events as they arrive, tells a clean end from a cut connection, and can stop at any moment.
import { request, type IncomingMessage } from 'node:http';

export interface ChangeEvent {
  id: string;
  event: string;
  data: Record<string, unknown>;
  /** `data` as sent (ids above 2^53 keep their digits here). */
  raw: string;
}

export interface StreamOptions {
  token: string;
  /** Sent as the `after` parameter. */
  after?: string;
  /** Sent as Last-Event-ID. */
  lastEventId?: string;
  headers?: Record<string, string>;
}

/** A refused stream: its status, headers and envelope. */
export interface Refused {
  status: number;
  headers: IncomingMessage['headers'];
  body: { status: number; message: string; data: unknown };
}

export class ChangeStream {
  readonly events: ChangeEvent[] = [];
  /** Comment lines (`: heartbeat`) and `retry:` fields seen. */
  readonly comments: string[] = [];
  retry: number | undefined;
  /** 'open' while the server sends; 'ended' after a clean end; 'cut' after an error or reset. */
  state: 'open' | 'ended' | 'cut' = 'open';
  private buffer = '';
  private waiters: Array<() => void> = [];

  private constructor(
    readonly response: IncomingMessage,
    private readonly abort: () => void,
  ) {
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => this.take(chunk));
    response.on('end', () => this.finish('ended'));
    response.on('error', () => this.finish('cut'));
    response.on('aborted', () => this.finish('cut'));
  }

  /** Opens a stream; a refused one (not 200) is returned as its envelope. */
  static open(baseUrl: string, options: StreamOptions): Promise<ChangeStream | Refused> {
    const url = new URL('/books/changes', baseUrl);
    if (options.after !== undefined) url.searchParams.set('after', options.after);
    const headers: Record<string, string> = { authorization: options.token, accept: 'text/event-stream', ...options.headers };
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    return new Promise((resolve, reject) => {
      const outgoing = request(url, { headers, agent: false }, (response) => {
        if (response.statusCode !== 200) {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: JSON.parse(text) }));
          return;
        }
        resolve(new ChangeStream(response, () => outgoing.destroy()));
      });
      outgoing.on('error', reject);
      outgoing.end();
    });
  }

  /** Opens a stream that must be accepted. */
  static async follow(baseUrl: string, options: StreamOptions): Promise<ChangeStream> {
    const stream = await ChangeStream.open(baseUrl, options);
    if (!(stream instanceof ChangeStream)) throw new Error(`stream refused: ${stream.status} ${JSON.stringify(stream.body)}`);
    return stream;
  }

  /** The id of the last event received (what a client resumes from). */
  get lastEventId(): string | undefined {
    return this.events.at(-1)?.id;
  }

  /** Resolves once `ready()` holds (checked after every chunk), or rejects after `timeoutMs`. */
  async until(ready: () => boolean, timeoutMs = 10_000, what = 'the expected events'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}: ${this.events.length} events, state ${this.state}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 100));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits until at least `count` events arrived. */
  untilEvents(count: number, timeoutMs = 10_000): Promise<void> {
    return this.until(() => this.events.length >= count, timeoutMs, `${count} events`);
  }

  /** Closes the connection from the client's side. */
  close(): void {
    this.abort();
    this.finish('cut');
  }

  private finish(state: 'ended' | 'cut'): void {
    if (this.state === 'open') this.state = state;
    this.wake();
  }

  private take(chunk: string): void {
    this.buffer += chunk;
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const fields: Record<string, string> = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) {
          this.comments.push(line);
          continue;
        }
        const colon = line.indexOf(':');
        const name = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        fields[name] = fields[name] === undefined ? value : `${fields[name]}\n${value}`;
      }
      if (fields.retry !== undefined) this.retry = Number(fields.retry);
      if (fields.data !== undefined) {
        this.events.push({ id: fields.id ?? '', event: fields.event ?? 'message', data: JSON.parse(fields.data), raw: fields.data });
      }
    }
    this.wake();
  }

  private wake(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }
}
