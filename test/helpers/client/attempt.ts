// HTTP attempts that never throw, for tests that put a service under load or through an
// outage: each records its status, body, timing, or the transport error that ended it.

export interface Outcome {
  method: string;
  path: string;
  /** Date.now() when the request was sent and when its outcome was known. */
  startedAt: number;
  endedAt: number;
  /** HTTP status; undefined when the request failed below HTTP. */
  status?: number;
  text?: string;
  body?: { status: number; message: string; data: unknown };
  contentType?: string | null;
  /** Transport failure (connection refused, reset, closed): the cause's code and message. */
  error?: string;
  errorCode?: string;
}

/** One HTTP request that never throws: its outcome, whatever it is. */
export async function attempt(
  baseUrl: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<Outcome> {
  const startedAt = Date.now();
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = options.token;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await fetch(baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(options.timeoutMs ?? 30_000),
    });
    const text = await response.text();
    let body: Outcome['body'];
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      status: response.status,
      text,
      body,
      contentType: response.headers.get('content-type'),
    };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return {
      method,
      path,
      startedAt,
      endedAt: Date.now(),
      error: `${(error as Error).name}: ${(error as Error).message}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''}`,
      errorCode: cause?.code ?? (error as Error).name,
    };
  }
}

/** A short, readable line for an outcome, for failure messages. */
export function describeOutcome(outcome: Outcome): string {
  const took = outcome.endedAt - outcome.startedAt;
  const what = outcome.error ?? `HTTP ${outcome.status} ${outcome.text?.slice(0, 200)}`;
  return `${outcome.method} ${outcome.path} (+${took} ms): ${what}`;
}
