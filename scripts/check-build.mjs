// `npm start` runs this first (prestart). After `git pull`, dist/ still holds the previous
// version: starting it would run old code against a newer checkout, silently. So when a file
// under src/ is newer than the build, this rebuilds when the compiler is installed, and
// otherwise refuses with the command that fixes it. An installed package has no src/: nothing to
// compare, nothing to do.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? '.');
const source = path.join(root, 'src');
const built = path.join(root, 'dist', 'cli.js');

/** The most recently changed file under `folder`, with its time. */
function newest(folder) {
  let found = { file: null, mtimeMs: 0 };
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    const candidate = entry.isDirectory() ? newest(full) : { file: full, mtimeMs: statSync(full).mtimeMs };
    if (candidate.mtimeMs > found.mtimeMs) found = candidate;
  }
  return found;
}

if (existsSync(source)) {
  const changed = newest(source);
  const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
  if (changed.mtimeMs > builtAt) {
    const why = builtAt === 0 ? 'dist/ has not been built' : `dist/ is older than src/ (${path.relative(root, changed.file)} changed since the last build)`;
    if (!existsSync(path.join(root, 'node_modules', 'typescript'))) {
      console.error(
        `Gatehouse: ${why}, and the compiler is not installed (npm install --omit=dev?).\nTo fix: npm install && npm run build, then npm start again.`,
      );
      process.exit(1);
    }
    console.error(`Gatehouse: ${why}: rebuilding (npm run build)…`);
    const result = spawnSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (result.status !== 0) {
      console.error('Gatehouse: the build failed (above); not starting the previous build.');
      process.exit(1);
    }
  }
}
