/**
 * `npm start` after `git pull`: scripts/check-build.mjs (the prestart script) rebuilds a dist/
 * older than src/ when the compiler is installed, refuses with the fix when it is not, and does
 * nothing when the build is current or there is no src/ (an installed package). Run on scratch
 * folders whose file times are set, not slept for.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';

const SCRIPT = path.resolve('scripts/check-build.mjs');
const folders: string[] = [];

/** A checkout: src/cli.ts changed at `sourceAt`, dist/cli.js built at `builtAt` (seconds), and a build script that leaves a mark. */
function checkout(sourceAt: number, builtAt: number | null, compiler: boolean): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'gatehouse-stale-'));
  folders.push(root);
  mkdirSync(path.join(root, 'src'));
  writeFileSync(path.join(root, 'src', 'cli.ts'), 'export {};\n');
  utimesSync(path.join(root, 'src', 'cli.ts'), sourceAt, sourceAt);
  if (builtAt !== null) {
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'dist', 'cli.js'), 'old\n');
    utimesSync(path.join(root, 'dist', 'cli.js'), builtAt, builtAt);
  }
  if (compiler) mkdirSync(path.join(root, 'node_modules', 'typescript'), { recursive: true });
  const build = "require('fs').mkdirSync('dist',{recursive:true});require('fs').writeFileSync('dist/cli.js','new\\n')";
  writeFileSync(path.join(root, 'package.json'), JSON.stringify({ name: 'scratch', private: true, scripts: { build: `node -e "${build}"` } }));
  return root;
}

const check = (root: string) => spawnSync(process.execPath, [SCRIPT, root], { cwd: root, encoding: 'utf8' });

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('npm start with a stale build', () => {
  const hourAgo = Date.now() / 1000 - 3600;

  test('dist/ current: nothing said, nothing rebuilt', () => {
    const root = checkout(hourAgo, hourAgo + 60, true);
    const result = check(root);
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(readFileSync(path.join(root, 'dist', 'cli.js'), 'utf8')).toBe('old\n');
  });

  test('src/ newer and the compiler installed: says why and rebuilds', () => {
    const root = checkout(hourAgo + 60, hourAgo, true);
    const result = check(root);
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(`dist/ is older than src/ (${path.join('src', 'cli.ts')} changed since the last build): rebuilding (npm run build)`);
    expect(readFileSync(path.join(root, 'dist', 'cli.js'), 'utf8')).toBe('new\n');
  });

  test('src/ newer without the compiler: refuses with the fix, the old build untouched', () => {
    const root = checkout(hourAgo + 60, hourAgo, false);
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('To fix: npm install && npm run build, then npm start again.');
    expect(readFileSync(path.join(root, 'dist', 'cli.js'), 'utf8')).toBe('old\n');
  });

  test('never built: refuses or builds the same way', () => {
    const root = checkout(hourAgo, null, false);
    const result = check(root);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('dist/ has not been built');
  });

  test('an installed package (no src/): nothing to compare', () => {
    const root = checkout(hourAgo + 60, hourAgo, false);
    rmSync(path.join(root, 'src'), { recursive: true });
    expect(check(root).status).toBe(0);
  });

  test('package.json runs the check before npm start', () => {
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.prestart).toBe('node scripts/check-build.mjs');
  });
});
