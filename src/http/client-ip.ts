/**
 * @module The client's IP address. Without trusted proxies it is the socket's peer address and
 * nothing the client sends can change it. With TRUST_PROXY=N, each of the N proxies in front
 * appends the address it received from, so the N-th entry from the right of X-Forwarded-For is
 * the last address no client could forge.
 */
import { isIP } from 'node:net';

function normalizeIp(address: string): string {
  const trimmed = address.trim();
  // IPv4 clients on a dual-stack socket appear as ::ffff:a.b.c.d; count them as a.b.c.d.
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed);
  return mapped?.[1] ?? trimmed.toLowerCase();
}

export function resolveClientIp(options: {
  remoteAddress: string | undefined;
  /** Reads X-Forwarded-For; called only when proxies are trusted (it runs on every request). */
  readForwardedFor: () => string | undefined;
  trustProxyHops: number;
}): string {
  const socketIp = options.remoteAddress ? normalizeIp(options.remoteAddress) : 'unknown';
  if (options.trustProxyHops === 0) return socketIp;
  const forwardedFor = options.readForwardedFor();
  if (forwardedFor === undefined) return socketIp;
  const chain = forwardedFor
    .split(',')
    .map(normalizeIp)
    .filter((entry) => entry !== '');
  if (chain.length === 0) return socketIp;
  // A chain shorter than the trusted hops: the furthest address we were given.
  const candidate = chain[Math.max(0, chain.length - options.trustProxyHops)];
  return candidate !== undefined && isIP(candidate) !== 0 ? candidate : socketIp;
}
