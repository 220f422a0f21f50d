// Which V8 young-generation size suits the server: the session check, the 429 of a login over its
// limit and the peak RSS, with `npm start`'s flags and with each `--max-semi-space-size` given, in
// alternating rounds on SQLite. Helps choose the start flags (package.json `start`).
//
//   npm run build && node bench/gc-flags.mjs [--sizes 2,8,16] [--rounds 2] [--seconds 5]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { procStatusMB, registeredCookie, runJson, startServer } from './lib.mjs';

const { values } = parseArgs({
  options: { sizes: { type: 'string', default: '2,8,16' }, rounds: { type: 'string', default: '2' }, seconds: { type: 'string', default: '5' } },
});
const SIZES = values.sizes.split(',').map(Number);
const SECONDS = Number(values.seconds);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gatehouse-gc-'));

async function serve(semiSpaceMB) {
  const env = {
    JWT_SECRET: 'bench-secret-0123456789-0123456789-0123456789',
    BCRYPT_ROUNDS: '4',
    MAIL_DELIVERY: 'worker',
    RATE_LIMIT_LOGIN: '1/1h',
    DATABASE_URL: `sqlite:${path.join(dir, `gc-${semiSpaceMB}-${Date.now()}.db`)}`,
  };
  return startServer(env, { nodeFlags: [`--max-semi-space-size=${semiSpaceMB}`, '--heap-growing-percent=50'] });
}

const results = new Map(SIZES.map((size) => [size, { session: [], refused: [], rss: [] }]));
for (let round = 1; round <= Number(values.rounds); round++) {
  for (const size of SIZES) {
    const { child, url } = await serve(size);
    try {
      const email = `gc-${size}-${Date.now()}@bench.example`;
      const cookie = await registeredCookie(url, email, 'Correct-Horse-9-Gc');
      const session = { url, path: '/api/auth/session', headers: { cookie }, connections: 32 };
      const login = {
        url,
        path: '/api/auth/login',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: { email, password: 'wrong-password-1' },
        connections: 32,
      };
      await runJson('load.mjs', [JSON.stringify({ ...session, duration: 2 })]);
      const entry = results.get(size);
      entry.session.push((await runJson('load.mjs', [JSON.stringify({ ...session, duration: SECONDS })])).rps);
      entry.refused.push((await runJson('load.mjs', [JSON.stringify({ ...login, duration: SECONDS })])).rps);
      entry.rss.push(procStatusMB(child.pid, 'VmHWM'));
      console.error(
        `round ${round} --max-semi-space-size=${size}: session ${Math.round(entry.session.at(-1))}/s, 429 ${Math.round(entry.refused.at(-1))}/s, peak RSS ${entry.rss.at(-1).toFixed(1)} MB`,
      );
    } finally {
      child.kill('SIGINT');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  }
}
const mean = (list) => list.reduce((a, b) => a + b, 0) / list.length;
for (const [size, entry] of results) {
  console.log(
    `--max-semi-space-size=${size} | session ${Math.round(mean(entry.session))}/s | 429 ${Math.round(mean(entry.refused))}/s | peak RSS ${Math.max(...entry.rss).toFixed(1)} MB`,
  );
}
fs.rmSync(dir, { recursive: true, force: true });
