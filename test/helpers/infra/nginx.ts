// nginx of the test's own in front of service instances, run from the repository's own
// configuration (deploy/nginx/book-service.conf): the file is rendered with only the test's
// addresses and paths put in (the instances, the listen address, the access log), and included
// in a main configuration that gives nginx a prefix, temp directories, a pid file and an error
// log in a temp directory. nginx runs in the foreground (`daemon off`), on a free port.
// Binary: NGINX (default /usr/sbin/nginx, Debian's nginx-light). Missing: describeIf('nginx')
// skips the suite (requirements.ts).
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';
import { logTail, makeScratchDir, missingTools, pollUntil, spawnServer, type ServerProcess } from './server-process.js';

export const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';

/** The configuration operators use, and the one the tests run. */
export const BOOK_SERVICE_CONF = fileURLToPath(new URL('../../../deploy/nginx/book-service.conf', import.meta.url));

/** Undefined when nginx can be run here, else what is missing. */
export function nginxMissing(): string | undefined {
  // nginx started as root runs its workers as `nobody`.
  return missingTools([[NGINX, 'apt-get install -y nginx-light, or set NGINX']], 'nobody');
}

export interface RenderSettings {
  /** host:port of each instance, in place of the example ones. */
  instances: readonly string[];
  /** host:port nginx listens on, in place of port 80. */
  listen: string;
  /** The access log's path, in place of /var/log/nginx/…. */
  accessLog: string;
}

/**
 * The repository's configuration with the test's addresses and paths, and nothing else changed.
 * Throws when the file no longer has the shape this expects (one upstream block with `server`
 * lines, one `listen`, one `access_log` path), so that a changed file is never tested by
 * accident in a shape the test did not mean.
 */
export function renderBookServiceConf(source: string, { instances, listen, accessLog }: RenderSettings): string {
  const upstream = /^upstream book_service \{\n[\s\S]*?^\}\n/m.exec(source);
  if (!upstream) throw new Error(`${BOOK_SERVICE_CONF}: no "upstream book_service { … }" block`);
  const servers = [...upstream[0].matchAll(/^( +)server +(\S+)( [^;\n]*)?;\n/gm)];
  const [first] = servers;
  if (first === undefined) throw new Error(`${BOOK_SERVICE_CONF}: no server line in the upstream block`);
  const serverLines = instances.map((address) => `${first[1]}server ${address}${first[3] ?? ''};\n`).join('');
  // The test's instances where the example ones were, with the same parameters.
  let block = upstream[0].replace(first[0], serverLines);
  for (const other of servers.slice(1)) block = block.replace(other[0], '');
  let rendered = source.replace(upstream[0], block);

  rendered = replaceExactlyOnce(rendered, /^( +listen +)80( [^;\n]*)?;$/m, (_, head: string, rest = '') => `${head}${listen}${rest};`, 'listen 80');
  rendered = replaceExactlyOnce(rendered, /^( +access_log +)\/var\/log\/nginx\/\S+( [^;\n]*)?;$/m, (_, head: string, rest = '') => `${head}${accessLog}${rest};`, 'access_log /var/log/nginx/…');
  return rendered;
}

function replaceExactlyOnce(text: string, pattern: RegExp, replacement: (...groups: string[]) => string, what: string): string {
  const matches = text.match(new RegExp(pattern.source, `${pattern.flags}g`)) ?? [];
  if (matches.length !== 1) throw new Error(`${BOOK_SERVICE_CONF}: expected one "${what}" line, found ${matches.length}`);
  return text.replace(pattern, replacement as (substring: string, ...args: unknown[]) => string);
}

export interface PrivateNginx {
  port: number;
  baseUrl: string;
  /** The rendered configuration, as nginx reads it. */
  conf: string;
  /** The access log's lines so far (the configuration's own log_format). */
  accessLog(): string[];
  /** The last lines of nginx's error log, for failure messages. */
  errorLogTail(lines?: number): string;
  stop(): Promise<void>;
}

/** Starts nginx in front of `instances` (host:port each) and waits until it accepts connections. */
export async function startNginx({ instances, source = readFileSync(BOOK_SERVICE_CONF, 'utf8') }: { instances: readonly string[]; source?: string }): Promise<PrivateNginx> {
  const port = await freePort();
  const spawned: { server?: ServerProcess } = {};
  // nginx's master stops its workers on SIGTERM (a SIGKILL would leave them holding the port).
  const scratch = makeScratchDir('book-nginx-', undefined, () => void spawned.server?.kill('SIGTERM'));
  // The workers run as `nobody` when the tests run as root: they write temp files below.
  chmodSync(scratch.path, 0o755);
  const file = (name: string) => join(scratch.path, name);
  const conf = renderBookServiceConf(source, { instances, listen: `127.0.0.1:${port}`, accessLog: file('access.log') });
  writeFileSync(file('book-service.conf'), conf);
  writeFileSync(
    file('nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${file('nginx.pid')};`,
      `error_log ${file('error.log')} info;`,
      'events { worker_connections 1024; }',
      'http {',
      ...['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((kind) => `    ${kind}_temp_path ${file(`temp-${kind}`)};`),
      // Debian's http-level settings, and gzip for JSON as another site may want it: the
      // service's server block must hold whatever it needs on its own.
      '    sendfile on;',
      '    tcp_nopush on;',
      '    gzip on;',
      '    gzip_types application/json;',
      `    include ${file('book-service.conf')};`,
      '}',
      '',
    ].join('\n'),
  );
  const running = spawnServer(NGINX, ['-p', scratch.path, '-c', file('nginx.conf'), '-e', file('error.log')]);
  spawned.server = running;
  await pollUntil(
    async () => {
      if (!running.running()) throw new Error(`nginx exited at startup:\n${logTail(file('error.log'), 20)}`);
      return accepts(port);
    },
    10_000,
    50,
    () => `nginx did not accept connections on 127.0.0.1:${port} within 10 s:\n${logTail(file('error.log'), 20)}`,
  );
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    conf,
    accessLog: () => {
      try {
        return readFileSync(file('access.log'), 'utf8').split('\n').filter(Boolean);
      } catch {
        return [];
      }
    },
    errorLogTail: (lines = 30) => logTail(file('error.log'), lines),
    async stop() {
      await running.stop(5_000);
      scratch.remove();
    },
  };
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
