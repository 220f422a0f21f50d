/**
 * Debian's nginx (/usr/sbin/nginx) run by a test, as an operator runs it in front of Gatehouse:
 * TLS with a self-signed certificate made here by openssl, on a free port, everything it writes
 * (pid, logs, temporary files) in a scratch folder, in the foreground (`daemon off`).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';

export const NGINX = '/usr/sbin/nginx';

export function nginxInstalled(): boolean {
  return fs.existsSync(NGINX) && fs.existsSync('/usr/bin/openssl');
}

/** A key and a self-signed certificate for `localhost` and 127.0.0.1, valid for a day. */
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

export interface RunningNginx {
  /** What nginx wrote to its error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * The lines every configuration needs to run unprivileged in `dir`; `http` is the inside of the
 * http block (the server blocks), as docs/production.md shows it.
 */
export function nginxConfig(dir: string, http: string): string {
  return `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${http}
}
`;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts nginx with `config` (written to `dir`) and waits until it accepts on `port`. */
export async function startNginx(dir: string, config: string, port: number): Promise<RunningNginx> {
  const file = path.join(dir, 'nginx.conf');
  fs.writeFileSync(file, config);
  const child: ChildProcess = spawn(NGINX, ['-c', file, '-p', dir, '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const errors = (): string => output + (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  for (let waited = 0; !(await listening(port)); waited += 50) {
    if (child.exitCode !== null || waited > 10_000) throw new Error(`nginx did not start:\n${errors()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    errors,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
