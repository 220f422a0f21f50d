/**
 * The library as a user gets it: `npm pack` (of the built dist/), the tarball installed by npm
 * in a scratch project with hono and @hono/node-server, and the file that opens
 * docs/library.md run there exactly as written. It must serve Gatehouse's pages and API and the
 * host's own route, generate its development secrets, and stop on SIGTERM.
 *
 * The install takes about a minute (better-sqlite3 and bcrypt build their native parts). When
 * npm cannot install (no registry), the unpacked tarball is used with this checkout's
 * node_modules instead, and the test says so on stderr: the file and the package contents are
 * still what is checked.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { freePort } from './support/free-port.js';
import { STRONG_PASSWORD } from './support/harness.js';

const run = promisify(execFile);
const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { name: string; bin: Record<string, string> };

/** The first ```js block of docs/library.md: the complete host file. */
function documentedFile(): string {
  const block = /```js\n([\s\S]*?)```/.exec(readFileSync('docs/library.md', 'utf8'));
  if (block === null) throw new Error('docs/library.md has no ```js block');
  return block[1]!;
}

describe('the npm package, installed and run as docs/library.md shows', { timeout: 300_000 }, () => {
  let scratch: string;
  let files: string[];
  let child: ChildProcess | null = null;
  let output = '';

  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-library-'));
    // The dist/ this run built (npm test builds first); --ignore-scripts: no rebuild under the other suites' feet.
    const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', scratch]);
    const packed = (JSON.parse(stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    files = packed.files.map((file) => file.path);
    const tarball = path.join(scratch, packed.filename);
    const project = path.join(scratch, 'app');
    mkdirSync(project);
    writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'scratch-host', private: true, type: 'module' }));
    try {
      await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, 'hono', '@hono/node-server'], { cwd: project, timeout: 240_000 });
    } catch (error) {
      process.stderr.write(
        `library-package: npm install failed (${(error as Error).message.split('\n')[0]}); using the unpacked tarball with this checkout's node_modules\n`,
      );
      const target = path.join(project, 'node_modules', manifest.name);
      mkdirSync(target, { recursive: true });
      await run('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
      symlinkSync(path.resolve('node_modules'), path.join(target, 'node_modules'));
      symlinkSync(path.resolve('node_modules/hono'), path.join(project, 'node_modules', 'hono'));
      mkdirSync(path.join(project, 'node_modules', '@hono'));
      symlinkSync(path.resolve('node_modules/@hono/node-server'), path.join(project, 'node_modules', '@hono', 'node-server'));
    }
    writeFileSync(path.join(project, 'server.mjs'), documentedFile());
  }, 280_000);
  afterAll(async () => {
    if (child !== null && child.exitCode === null) child.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
  });

  test('the package is named as the docs say, carries dist/ and its assets, and not the sources', () => {
    expect(manifest.name).toBe('gatehouse-auth');
    expect(manifest.bin).toEqual({ gatehouse: './dist/cli.js' });
    expect(readFileSync('docs/library.md', 'utf8')).toContain(`npm install ${manifest.name} hono @hono/node-server`);
    expect(documentedFile()).toContain(`from '${manifest.name}'`);
    for (const needed of ['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli.js', 'dist/web/assets/app.js', 'dist/web/assets/webauthn.js']) {
      expect(files, needed).toContain(needed);
    }
    expect(files.filter((file) => file.startsWith('src/') || file.startsWith('test/'))).toEqual([]);
  });

  test('server.mjs as written: /login, /api/auth/session, the email links, the host route with the session, the generated secrets, SIGTERM', async () => {
    const project = path.join(scratch, 'app');
    const port = await freePort();
    child = spawn(process.execPath, ['server.mjs'], { cwd: project, env: { PATH: process.env.PATH ?? '', PORT: String(port), LOG_LEVEL: 'warn' } });
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const started = Date.now();
    while (!output.includes('listening on')) {
      if (child.exitCode !== null || Date.now() - started > 30_000) throw new Error(`server.mjs did not start:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const base = `http://localhost:${port}`;
    expect(output).toContain(`open ${base}`);

    const login = await fetch(`${base}/login`);
    expect(login.status).toBe(200);
    expect(await login.text()).toMatch(/<form[^>]*login/i);
    const anonymous = await fetch(`${base}/api/auth/session`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: 'not_authenticated' });
    // The pages the emails link to are served too, not only /api/auth/*.
    expect((await fetch(`${base}/verify-email?token=x`)).status).toBe(200);
    expect((await fetch(`${base}/assets/app.js`)).status).toBe(200);
    expect((await fetch(`${base}/`, { redirect: 'manual' })).headers.get('location')).toBe('/login?return_to=/');

    const registered = await fetch(`${base}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ email: 'host@example.com', password: STRONG_PASSWORD }),
    });
    expect(registered.status).toBe(201);
    const cookie = registered.headers.getSetCookie()[0]!.split(';')[0]!;
    const session = await fetch(`${base}/api/auth/session`, { headers: { cookie } });
    expect(session.status).toBe(200);
    expect(await (await fetch(`${base}/`, { headers: { cookie } })).text()).toBe('Signed in as host@example.com');

    // JWT_SECRET and the encryption key generated as `gatehouse serve` does: private files in the data folder.
    for (const file of ['jwt-secret', 'encryption-key']) expect(statSync(path.join(project, 'data', file)).mode & 0o077).toBe(0);

    const exited = new Promise<number | null>((resolve) => child!.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(existsSync(path.join(project, 'data', 'gatehouse.db'))).toBe(true);
  });
});
