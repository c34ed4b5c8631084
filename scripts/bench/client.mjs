// The bench's own HTTP client for the servers under test: a free port to give a server, one
// request, a token.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { CREDENTIALS_BODY } from './settings.mjs';

export function freePort() {
  return new Promise((resolvePromise, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePromise(port));
    });
  });
}

/**
 * One HTTP request; resolves with status, headers, the body's text, its parsed JSON (unless
 * `parse` is false: a million books take the bench a second to parse) and `endedAt`, when its
 * last byte arrived (performance.now()).
 */
export function request(port, method, path, { token, body, headers: extraHeaders, agent = false, timeoutMs = 60_000, parse = true } = {}) {
  return new Promise((resolvePromise, reject) => {
    const headers = { ...extraHeaders };
    if (token) headers.authorization = token;
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent }, (res) => {
      const chunks = [];
      res.on('data', (chunk) => chunks.push(chunk));
      res.on('end', () => {
        const endedAt = performance.now();
        const text = Buffer.concat(chunks).toString('utf8');
        let json;
        try {
          json = parse ? JSON.parse(text) : undefined;
        } catch {
          json = undefined;
        }
        resolvePromise({ status: res.statusCode, headers: res.headers, json, text, endedAt });
      });
      res.on('error', reject);
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

export async function getToken(port) {
  const response = await request(port, 'POST', '/token', { body: CREDENTIALS_BODY });
  const token = response.json?.data?.token;
  if (response.status !== 200 || typeof token !== 'string') {
    throw new Error(`POST /token answered ${response.status}: ${response.text.slice(0, 200)}`);
  }
  return token;
}
