// The HTTP server under Fastify (src/http/node/server.ts, and the speed path
// src/fast/answer-in-turns.ts plugged into it): requests of one
// event-loop turn are answered together, first come first served, at most REQUESTS_PER_TURN
// per turn (fewer in a turn that accepted a connection); a client that half-closes still gets
// its answer; the server keeps Fastify's settings.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer } from '../../src/http/node/server.js';
import { REQUESTS_PER_TURN, answerInTurns } from '../../src/fast/answer-in-turns.js';
import { fastPaths, machinery } from '../helpers/node-http.js';
import { halfClosedExchange, requestBytes } from '../helpers/client/raw-http.js';
import { startService, type InProcessService } from '../helpers/service/start-service.js';

// Tests of the speed path itself: skipped when FAST_PATHS turns answer-in-turns off.
describe.skipIf(!fastPaths.has('answer-in-turns'))('answerInTurns: the scheduler', () => {
  /** What Node's parser does in one poll phase: 'request' for each request read, synchronously. */
  function arrive(turns: ReturnType<typeof answerInTurns>, names: string[]) {
    for (const name of names) turns.listener({ name } as unknown as IncomingMessage, {} as ServerResponse);
  }
  const sizes = { perTurn: 4, perTurnWhileAccepting: 1 };
  const nameOf = (request: IncomingMessage) => (request as unknown as { name: string }).name;

  it('answers nothing inside the read callback, then the turn’s requests in the check phase, oldest first', async () => {
    const answered: string[] = [];
    const turns = answerInTurns((request) => answered.push(nameOf(request)), sizes);
    arrive(turns, ['a', 'b', 'c']);
    expect(answered).toEqual([]);
    await nextTurn();
    expect(answered).toEqual(['a', 'b', 'c']);
  });

  it('answers at most perTurn per turn, so the loop turns (and accepts connections) in between', async () => {
    const answered: string[] = [];
    const turns = answerInTurns((request) => answered.push(nameOf(request)), sizes);
    arrive(turns, ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10']);
    await nextTurn();
    expect(answered).toEqual(['1', '2', '3', '4']);
    arrive(turns, ['11']); // read in a later turn: after those already waiting
    await nextTurn();
    expect(answered).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
    await nextTurn();
    await nextTurn();
    expect(answered).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11']);
  });

  it('in a turn that accepted a connection, only perTurnWhileAccepting, so the next accept comes soon', async () => {
    const answered: string[] = [];
    const turns = answerInTurns((request) => answered.push(nameOf(request)), sizes);
    arrive(turns, ['1', '2', '3', '4', '5', '6']);
    turns.connectionAccepted();
    await nextTurn();
    expect(answered).toEqual(['1']);
    turns.connectionAccepted(); // the burst goes on
    await nextTurn();
    expect(answered).toEqual(['1', '2']);
    await nextTurn(); // no connection this turn: a full batch again
    expect(answered).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('a connection accepted in a turn with no request to answer does not shrink a later turn’s batch', async () => {
    const answered: string[] = [];
    const turns = answerInTurns((request) => answered.push(nameOf(request)), sizes);
    turns.connectionAccepted(); // an idle turn: a client connected, sent nothing yet
    await nextTurn();
    await nextTurn();
    arrive(turns, ['1', '2', '3', '4']);
    await nextTurn();
    expect(answered).toEqual(['1', '2', '3', '4']);
  });

  it('a handler that throws does not leave the requests behind it unanswered', async () => {
    const answered: string[] = [];
    const thrown: unknown[] = [];
    const onUncaught = (error: unknown) => thrown.push(error);
    const listeners = process.listeners('uncaughtException');
    process.removeAllListeners('uncaughtException');
    process.on('uncaughtException', onUncaught);
    try {
      const turns = answerInTurns((request) => {
        if (nameOf(request) === 'b') throw new Error('handler failed');
        answered.push(nameOf(request));
      }, { perTurn: 8, perTurnWhileAccepting: 8 });
      arrive(turns, ['a', 'b', 'c', 'd']);
      for (let turn = 0; turn < 4 && answered.length < 3; turn += 1) await nextTurn();
      expect(answered).toEqual(['a', 'c', 'd']);
      expect(thrown).toHaveLength(1);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      for (const original of listeners) process.on('uncaughtException', original);
    }
  });
});

// Skipped when FAST_PATHS turns answer-in-turns off: it tests that path.
describe.skipIf(!fastPaths.has('answer-in-turns'))('createHttpServer with answer-in-turns: a real server', () => {
  it('answers every request of many connections at once, each connection’s in order', async () => {
    const server = createHttpServer(
      (request, response) => {
        response.setHeader('content-type', 'text/plain');
        response.end(request.url);
      },
      { keepAliveTimeout: 5_000, requestTimeout: 10_000, connectionTimeout: 60_000 },
      { listenerLayer: (handler) => answerInTurns(handler) },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    // Node's own 'connection' listener, and the scheduler's (it answers fewer per turn while accepting).
    expect(server.listenerCount('connection')).toBe(2);
    try {
      // More requests at once than one turn answers: 5 per connection, 40 connections.
      const connections = Array.from({ length: 40 }, async (_, connection) => {
        const answers: string[] = [];
        for (let request = 0; request < 5; request += 1) {
          const response = await fetch(`http://127.0.0.1:${port}/${connection}/${request}`);
          answers.push(await response.text());
        }
        return answers;
      });
      const results = await Promise.all(connections);
      expect(40 * 5).toBeGreaterThan(REQUESTS_PER_TURN);
      results.forEach((answers, connection) => {
        expect(answers).toEqual([0, 1, 2, 3, 4].map((request) => `/${connection}/${request}`));
      });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

// Skipped when NODE_HTTP_PARTS turns answer-half-closed-clients off: it tests that part.
describe.skipIf(!machinery.answerHalfClosedClients)('createHttpServer: half-closed clients', () => {
  /** A server whose answers take 20 ms (a store query), and one request sent with its FIN. */
  async function halfClosedRequest(answerHalfClosedClients: boolean) {
    const server = createHttpServer(
      (_request, response) => void setTimeout(() => response.end('answered'), 20),
      { keepAliveTimeout: 5_000, requestTimeout: 10_000, connectionTimeout: 60_000 },
      { answerHalfClosedClients },
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      return await halfClosedExchange(port, requestBytes({ method: 'GET', path: '/', headers: [['Connection', 'keep-alive']] }));
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  it('answers a request whose client half-closed before the answer was ready, then closes', async () => {
    const exchange = await halfClosedRequest(true);
    expect(exchange.responses.map((response) => response.body)).toEqual(['answered']);
    expect(exchange.closed).toBe(true);
  });

  it('switched off, Node’s default: the FIN ends the connection and the answer is lost', async () => {
    const exchange = await halfClosedRequest(false);
    expect(exchange.responses).toEqual([]);
    expect(exchange.closed).toBe(true);
  });
});

describe('the service’s server keeps Fastify’s settings', () => {
  let service: InProcessService;
  beforeAll(async () => {
    service = await startService({ kind: 'sqlite', env: { REQUEST_TIMEOUT: '12' } });
  });
  afterAll(() => service?.stop());

  it('header size limit, timeouts and keep-alive are those app.ts sets', () => {
    const server = service.app.server;
    // Set from the `maxHeaderSize` option; @types/node does not declare the property.
    expect((server as typeof server & { maxHeaderSize?: number }).maxHeaderSize).toBe(128 * 1024);
    expect(server.requestTimeout).toBe(12_000);
    expect(server.headersTimeout).toBe(12_000);
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.timeout).toBe(60_000);
  });
});

describe('NODE_HTTP_PARTS and FAST_PATHS switch what stands between Node and Fastify (src/http/node, src/fast/answer-in-turns.ts)', () => {
  async function serverWith(env: Record<string, string>) {
    const service = await startService({ kind: 'sqlite', env });
    const server = service.app.server;
    const seen = {
      requestListeners: server.listenerCount('request'),
      connectionListeners: server.listenerCount('connection'),
      checkExpectationListeners: server.listenerCount('checkExpectation'),
      // Undeclared by @types/node (src/http/node/half-close.ts).
      httpAllowHalfOpen: (server as typeof server & { httpAllowHalfOpen?: boolean }).httpAllowHalfOpen === true,
    };
    await service.stop();
    return seen;
  }

  const OFF = { requestListeners: 1, connectionListeners: 1, checkExpectationListeners: 0, httpAllowHalfOpen: false };
  // 'request': lingering close, the answers' tracking, and the turns in front of Fastify's handler.
  const ON = { requestListeners: 3, connectionListeners: 2, checkExpectationListeners: 1, httpAllowHalfOpen: true };

  it('both off: Fastify makes its own server, and nothing is added to it', async () => {
    expect(await serverWith({ FAST_PATHS: 'off', NODE_HTTP_PARTS: 'off' })).toEqual(OFF);
  });

  it('both on: the server under Fastify, with every part and the turns', async () => {
    expect(await serverWith({ FAST_PATHS: 'on', NODE_HTTP_PARTS: 'on' })).toEqual(ON);
  });

  it('answer-in-turns alone: our server, its one connection listener the only addition', async () => {
    expect(await serverWith({ FAST_PATHS: 'answer-in-turns', NODE_HTTP_PARTS: 'off' })).toEqual({ ...OFF, connectionListeners: 2 });
  });

  it('HTTP_MACHINERY, the older switch of both, still works: off and on', async () => {
    // The new switches, cleared (empty is unset): the runner's own would win over it.
    const alone = { FAST_PATHS: '', NODE_HTTP_PARTS: '' };
    expect(await serverWith({ ...alone, HTTP_MACHINERY: 'off' })).toEqual(OFF);
    expect(await serverWith({ ...alone, HTTP_MACHINERY: 'on' })).toEqual(ON);
  });
});
