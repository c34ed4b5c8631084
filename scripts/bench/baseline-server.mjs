// The baseline: the cheapest possible JSON answer from node:http, in its own process, started by
// the bench as `node scripts/bench/baseline-server.mjs PORT`.
import { Buffer } from 'node:buffer';
import http from 'node:http';
import process from 'node:process';
import { BASELINE_BODY } from './settings.mjs';

function runBaselineServer(port) {
  const body = Buffer.from(BASELINE_BODY);
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': body.length };
  http
    .createServer((request, response) => {
      request.resume();
      response.writeHead(200, headers);
      response.end(body);
    })
    .listen(port, '127.0.0.1');
}

runBaselineServer(Number(process.argv[2]));
