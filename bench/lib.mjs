// Helpers shared by the benchmark (run.mjs) and the soak test (soak.mjs): both drive the built
// server as its own process, exactly as an operator would run it.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CLI = path.join(root, 'dist', 'cli.js');

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The Node flags of `npm start`, read from package.json so that what is measured cannot drift from it. */
export const START_FLAGS = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => word.startsWith('--'));

/**
 * Starts `dist/cli.js serve` (or another build's, `cli`) on PORT=0 and resolves once /healthz answers 200. The URL comes from
 * the "listening on" log line, since the port is chosen by the OS. `onOutput`, when given, sees
 * every later chunk of the server's stdout and stderr (otherwise the output is discarded, but
 * still read, so a full pipe never blocks the server). `nodeFlags` replaces `npm start`'s Node flags
 * (a profile, another heap size).
 */
export async function startServer(env, { onOutput, cli = CLI, nodeFlags = START_FLAGS } = {}) {
  const started = performance.now();
  const child = spawn(process.execPath, [...nodeFlags, cli, 'serve'], {
    // ENV_FILE=/dev/null: a developer's own ./.env never changes what is measured.
    env: { PATH: process.env.PATH, PORT: '0', LOG_LEVEL: 'info', ENV_FILE: '/dev/null', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const onData = (chunk) => {
    output += chunk;
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const url = await new Promise((resolve, reject) => {
    const check = () => {
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match) resolve(match[1]);
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.once('exit', () => reject(new Error(`server exited:\n${output}`)));
  });
  // Bounded: a server that listens but never turns healthy fails the run instead of hanging it.
  for (let attempt = 0; ; attempt++) {
    const response = await fetch(`${url}/healthz`).catch(() => null);
    if (response?.status === 200) break;
    if (attempt >= 6000) {
      child.kill('SIGKILL');
      throw new Error(`server at ${url} never answered 200 on /healthz:\n${output}`);
    }
    await sleep(5);
  }
  const startupMs = performance.now() - started;
  child.stdout.removeAllListeners('data');
  child.stderr.removeAllListeners('data');
  if (onOutput) {
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
  } else {
    child.stdout.resume();
    child.stderr.resume();
  }
  return { child, url, startupMs };
}

/** Kilobyte field of /proc/<pid>/status (VmRSS, VmHWM, ...) in MB. */
/** Registers `email` on the server at `url` and returns its cookies as a Cookie header (the new session's). */
export async function registeredCookie(url, email, password) {
  const registered = await fetch(`${url}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}`);
  return registered.headers
    .getSetCookie()
    .map((header) => header.split(';')[0])
    .join('; ');
}

export function procStatusMB(pid, field) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1]) / 1024;
}

/**
 * CPU seconds the main thread of process `pid` has used so far, in user space and in the kernel
 * (Linux; null elsewhere). The event loop runs on the main thread, so this is what bounds the
 * throughput of cheap requests.
 */
export function mainThreadCpu(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    const ticksPerSecond = 100; // USER_HZ, 100 on every Linux this runs on
    return { user: Number(fields[11]) / ticksPerSecond, kernel: Number(fields[12]) / ticksPerSecond };
  } catch {
    return null;
  }
}

/** Whether something accepts TCP connections there (within 500 ms). */
export function answers(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.setTimeout(500, () => (socket.destroy(), resolve(false)));
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

/** Runs `bench/<script>` with `args` in a process of its own; its last line of output, as JSON. */
export function runJson(script, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, 'bench', script), ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').pop();
      if (code !== 0 || !line) reject(new Error(`${script} failed (${code})`));
      else resolve(JSON.parse(line));
    });
  });
}
