// Fuzzing request headers (harness.ts says what every request is held to): generated
// Authorization, Content-Type and other headers (odd ones included: Expect, Content-Encoding,
// method overrides, X-Request-Id) at every endpoint; only a valid token authenticates, and a
// request id is echoed only when it is a plain token.
import fc from 'fast-check';
import { expect } from 'vitest';
import { expectEnvelopeShape, expectSuccessData } from '../../helpers/client/envelope.js';
import type { RawRequest } from '../../helpers/client/raw-http.js';
import { machinery } from '../../helpers/node-http.js';
import { TEST_PASSWORD, TEST_USERNAME } from '../../helpers/client/test-account.js';
import {
  ENDPOINTS,
  describeRequest,
  ensureBooks,
  expectAuthenticationFirst,
  expectPrototypesUntouched,
  expectStoreEffect,
  fuzzEveryStore,
  itHolds,
  send,
  snapshot,
  successShape,
  targetOf,
  type Endpoint,
  type Fixture,
} from './harness.js';
import { authChoice, authorization, contentType, headerSafeJunk, type AuthChoice } from './inputs.js';

// ---------------------------------------------------------------------------------------
// Header cases
// ---------------------------------------------------------------------------------------

/** Headers a client may add; some are odd (Expect, Content-Encoding, method overrides). */
const extraHeader = fc.oneof(
  fc.constantFrom<[string, string]>(
    ['Expect', '100-continue'],
    // Left out when NODE_HTTP_PARTS turns ignore-unknown-expect off: Node answers it with a bare 417.
    ...(machinery.ignoreUnknownExpect ? [['Expect', 'something-else'] as [string, string]] : []),
    ['Content-Encoding', 'gzip'],
    ['Accept', 'text/html'],
    ['Accept', 'application/xml'],
    ['Accept-Encoding', 'gzip, deflate, br'],
    ['Accept-Charset', 'utf-16'],
    ['X-HTTP-Method-Override', 'DELETE'],
    ['X-Forwarded-For', '203.0.113.9'],
    ['Forwarded', 'for=203.0.113.9'],
    ['Origin', 'https://evil.example'],
    ['Cookie', 'session=abc'],
    ['Range', 'bytes=0-1'],
    ['If-None-Match', '*'],
    ['If-Modified-Since', 'Thu, 01 Jan 1970 00:00:00 GMT'],
    ['TE', 'trailers'],
    ['Upgrade', 'h2c'],
    ['X-Request-Id', 'fuzz-request-1'],
    ['Proxy-Authorization', 'Basic eDp5'],
    ['Content-Length', '0'],
    ['Content-Length', '-1'],
    ['Content-Length', '1, 2'],
    ['Host', 'evil.example'],
  ),
  fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), headerSafeJunk),
  fc.tuple(fc.constant('X-Request-Id'), headerSafeJunk),
  fc.tuple(fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/), fc.string({ unit: 'binary-ascii', maxLength: 12 }).map((value) => value.replace(/[\r\n]/g, ''))),
);

interface HeaderCase {
  endpoint: Endpoint;
  auth: AuthChoice;
  contentType: string | undefined;
  extras: Array<[string, string]>;
  pick: number;
}

const headerCase: fc.Arbitrary<HeaderCase> = fc.record({
  endpoint: fc.constantFrom(...ENDPOINTS),
  auth: authChoice,
  contentType,
  extras: fc.array(extraHeader, { maxLength: 3 }),
  pick: fc.nat(),
});

const HEADER_CASE_BODY = JSON.stringify({ title: 'Header fuzz', author: 'Fuzz', year: 2002, username: TEST_USERNAME, password: TEST_PASSWORD });

async function runHeaderCase(fixture: Fixture, testCase: HeaderCase): Promise<void> {
  const before = await ensureBooks(fixture);
  const target = targetOf(testCase.endpoint, before.books, testCase.pick);
  const auth = authorization(testCase.auth, fixture.token);
  const headers: Array<[string, string | Buffer]> = [...auth.headers, ...testCase.extras];
  if (testCase.contentType !== undefined) headers.push(['Content-Type', testCase.contentType]);
  const takesBody = target.method === 'POST' || target.method === 'PUT';
  const request: RawRequest = { method: target.method, path: target.path, headers, body: takesBody ? HEADER_CASE_BODY : undefined };
  const context = describeRequest(request, { validToken: auth.valid });
  const response = await send(fixture, request, context);
  if (response.status === 304) {
    // The one answer that is not the envelope (HTTP allows no body): a read of one existing book
    // with a valid token and an If-None-Match naming it (docs/api.md "Conditional requests").
    expect(testCase.endpoint, `304 to a read of one existing book only\n${context}`).toBe('read');
    expect(auth.valid, `304 with a valid token only\n${context}`).toBe(true);
    expect(testCase.extras.some(([name]) => name.toLowerCase() === 'if-none-match'), `304 only for If-None-Match\n${context}`).toBe(true);
    expect(response.body, context).toBe('');
    expect(response.headers.etag, context).toMatch(/^"\d+-\d+"$/);
    return;
  }
  const envelope = expectEnvelopeShape(response, context);
  expectPrototypesUntouched(context);
  expectAuthenticationFirst(target.protected, auth.valid, response, envelope, context);
  if (response.status >= 200 && response.status < 300) expectSuccessData(envelope, successShape(target), context);
  // Node strips the spaces and tabs around a header value.
  const requestId = testCase.extras.find(([name]) => name.toLowerCase() === 'x-request-id')?.[1].replace(/^[ \t]+|[ \t]+$/g, '');
  if (response.headers['x-request-id'] !== undefined) {
    // Echoed only when it is a plain token; otherwise a fresh id: never reflected raw.
    const echoed = response.headers['x-request-id'];
    expect(echoed === requestId || /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(echoed), `x-request-id ${echoed}\n${context}`).toBe(true);
    expect(echoed, context).toMatch(/^[A-Za-z0-9._:@/+=-]{1,128}$/);
  }
  if (target.write) {
    const after = await snapshot(fixture);
    expectStoreEffect(before, after, response, envelope, target.operation, context, {
      id: target.id,
      fields: target.operation === 'delete' ? undefined : { title: 'Header fuzz', author: 'Fuzz', year: 2002 },
    });
  }
}

// ---------------------------------------------------------------------------------------
// The suites
// ---------------------------------------------------------------------------------------

fuzzEveryStore((fixture, kind) => {
  itHolds(
    'generated Authorization, Content-Type and other headers at every endpoint: envelope, no 5xx, no drop, only a valid token authenticates',
    headerCase,
    (testCase) => runHeaderCase(fixture, testCase),
    2000,
    kind,
  );
});
