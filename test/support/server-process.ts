/**
 * Runs the built server (`dist/cli.js serve`) in a child process, as an operator would, and
 * reads its address from the "listening on http://…" log line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const CLI = path.resolve('dist/cli.js');

export interface ServerProcess {
  url: string;
  /** Everything the server printed so far. */
  output(): string;
  /** The process id, for signals a test sends itself. */
  pid: number;
  /** Resolves with the exit code (null when a signal killed it) once the process has exited. */
  exited: Promise<number | null>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

export async function startServerProcess(options: { env: Record<string, string>; cwd: string }): Promise<ServerProcess> {
  const child: ChildProcess = spawn(process.execPath, [CLI, 'serve'], {
    cwd: options.cwd,
    // ENV_FILE=/dev/null: a developer's own ./.env never changes what a test runs (a test of .env
    // itself passes its own ENV_FILE).
    env: { PATH: process.env.PATH ?? '', PORT: '0', LOG_LEVEL: 'info', ENV_FILE: '/dev/null', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      const match = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', () => reject(new Error(`the server exited before listening:\n${output}`)));
  });
  return {
    url,
    pid: child.pid!,
    exited,
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
