// The baselines, each in its own process, started by the bench:
//   node scripts/bench/baseline-server.mjs PORT
//     the cheapest possible JSON answer from node:http (a fixed book envelope): the ceiling of
//     one Node process;
//   node scripts/bench/baseline-server.mjs PORT POSTGRES_URL
//     the floor of a PostgreSQL read in Node with one query per request: node:http and pg with
//     nothing else (no framework, no token check, no log, no metrics). GET /book/:id reads the
//     service's own books table through a pool of 10 (the service's default) with one named
//     prepared statement per request (the service shares one query among the requests that
//     arrive together), and answers the same envelope.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import process from 'node:process';
import pg from 'pg';
import { BASELINE_BODY } from './settings.mjs';

const JSON_TYPE = 'application/json; charset=utf-8';

function runBaselineServer(port) {
  const body = Buffer.from(BASELINE_BODY);
  const headers = { 'content-type': JSON_TYPE, 'content-length': body.length };
  http
    .createServer((request, response) => {
      request.resume();
      response.writeHead(200, headers);
      response.end(body);
    })
    .listen(port, '127.0.0.1');
}

function runPostgresFloorServer(port, url) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const query = { name: 'get_book', text: 'select id, title, author, year from books where id = $1' };
  const answer = (response, status, envelope) => {
    const body = JSON.stringify(envelope);
    response.writeHead(status, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
    response.end(body);
  };
  http
    .createServer(async (request, response) => {
      request.resume();
      const id = /^\/book\/(\d+)$/.exec(request.url ?? '')?.[1];
      if (id === undefined) return answer(response, 200, { status: 200, message: 'OK', data: null });
      try {
        const { rows } = await pool.query({ ...query, values: [id] });
        const book = rows[0] && { ...rows[0], id: Number(rows[0].id) };
        if (book) answer(response, 200, { status: 200, message: 'Book retrieved successfully', data: book });
        else answer(response, 404, { status: 404, message: 'Book not found', data: null });
      } catch (error) {
        answer(response, 503, { status: 503, message: String(error), data: null });
      }
    })
    .listen(port, '127.0.0.1');
}

const [port, url] = process.argv.slice(2);
if (url) runPostgresFloorServer(Number(port), url);
else runBaselineServer(Number(port));
