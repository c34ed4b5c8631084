// The test client: talks to a running service over real HTTP (fetch), parses the JSON
// envelope, and logs in with the test account.
import type { BookFields } from '../../../src/books/book.js';
import type { Book } from './books.js';
import { TEST_PASSWORD, TEST_USERNAME } from './test-account.js';

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  /** Parsed JSON (ids above 2^53 lose digits here: read `text` for exact ids). */
  body: { status: number; message: string; data: unknown } & Record<string, unknown>;
}

export interface RequestOptions {
  /** An object is sent as JSON with Content-Type application/json; a string is sent as is. */
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
}

export class ApiClient {
  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token !== undefined) headers.authorization = options.token;
    let body: string | undefined;
    if (typeof options.body === 'string') {
      body = options.body;
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const response = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await response.text();
    let parsed: ApiResponse['body'];
    try {
      parsed = text === '' ? (undefined as never) : JSON.parse(text);
    } catch {
      throw new Error(`${method} ${path}: response is not JSON (HTTP ${response.status}): ${text.slice(0, 200)}`);
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  /** Logs in with the test account; the token. */
  async token(): Promise<string> {
    const response = await this.request('POST', '/token', {
      body: { username: TEST_USERNAME, password: TEST_PASSWORD },
    });
    if (response.status !== 200) throw new Error(`login failed: ${response.text}`);
    return (response.body.data as { token: string }).token;
  }

  async createBook(token: string, book: BookFields): Promise<Book> {
    const response = await this.request('POST', '/book', { token, body: book });
    if (response.status !== 201) throw new Error(`create failed: ${response.text}`);
    return response.body.data as Book;
  }
}

/** A token from the service at `baseUrl`, with the test account (the one login helper). */
export function login(baseUrl: string): Promise<string> {
  return new ApiClient(baseUrl).token();
}
