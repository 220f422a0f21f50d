/**
 * Finds the PostgreSQL and Redis the suites that need them run against. DATABASE_URL and
 * REDIS_URL name them (CI sets both); otherwise the local defaults are tried. When a server does
 * not answer, its suites are skipped with a message — unless REQUIRE_SERVICES=1 (CI), where a
 * missing server fails the run instead of silently testing less.
 */
import net from 'node:net';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';
const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

function reachable(url: string, fallbackPort: number): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname.replace(/^\[|\]$/g, ''), port: Number(port || fallbackPort) });
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

async function probe(name: string, candidate: string, port: number, variable: string): Promise<string | null> {
  if (await reachable(candidate, port)) return candidate;
  const message = `${name} suites skipped: nothing answers at ${new URL(candidate).host} (set ${variable} to run them).`;
  if (process.env.REQUIRE_SERVICES === '1') throw new Error(`${message} REQUIRE_SERVICES=1 forbids skipping.`);
  console.warn(message);
  return null;
}

const envDatabaseUrl = process.env.DATABASE_URL;
export const postgresUrl = await probe(
  'PostgreSQL',
  envDatabaseUrl && /^postgres(ql)?:\/\//.test(envDatabaseUrl) ? envDatabaseUrl : DEFAULT_POSTGRES_URL,
  5432,
  'DATABASE_URL=postgres://…',
);

export const redisUrl = await probe('Redis', process.env.REDIS_URL ?? DEFAULT_REDIS_URL, 6379, 'REDIS_URL=redis://…');
