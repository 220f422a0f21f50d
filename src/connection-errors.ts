/**
 * @module Start and connection failures said in the operator's terms: which variable names the
 * service that did not answer, and what to do. "connect ECONNREFUSED 127.0.0.1:5999" leaves the
 * reader to guess which of DATABASE_URL, REDIS_URL or SMTP_URL points there.
 */

type Env = Record<string, string | undefined>;

/** A service Gatehouse connects to, as one variable names it. */
export interface ServiceAddress {
  variable: 'DATABASE_URL' | 'REDIS_URL' | 'SMTP_URL';
  /** What to ask about: "is PostgreSQL running?". */
  service: string;
  host: string;
  port: number;
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/** Whether `code` says the service could not be reached at all (rather than refused what it was sent). */
export function isConnectionCode(code: string): boolean {
  return CONNECTION_CODES.has(code);
}

/** Host and port of a URL, with the scheme's usual port when it has none; null when the text is not such a URL. */
function hostAndPort(text: string | undefined, defaultPort: number): { host: string; port: number } | null {
  if (text === undefined || text.trim() === '') return null;
  try {
    const url = new URL(text);
    if (url.hostname === '') return null;
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: url.port === '' ? defaultPort : Number(url.port) };
  } catch {
    return null;
  }
}

/** The services the environment names (a SQLite DATABASE_URL names none). */
export function servicesOf(env: Env): ServiceAddress[] {
  const services: ServiceAddress[] = [];
  const database = env.DATABASE_URL;
  if (database !== undefined && /^postgres(ql)?:\/\//.test(database)) {
    const target = hostAndPort(database, 5432);
    if (target !== null) services.push({ variable: 'DATABASE_URL', service: 'PostgreSQL', ...target });
  }
  const redis = hostAndPort(env.REDIS_URL, 6379);
  if (redis !== null) services.push({ variable: 'REDIS_URL', service: 'Redis', ...redis });
  const smtpUrl = env.SMTP_URL;
  const smtp = hostAndPort(smtpUrl, smtpUrl?.startsWith('smtps:') === true ? 465 : 587);
  if (smtp !== null) services.push({ variable: 'SMTP_URL', service: 'the mail server', ...smtp });
  return services;
}

interface NodeError {
  code?: string;
  address?: string;
  port?: number;
  hostname?: string;
  message?: string;
  errors?: unknown[];
}

/** The system error behind `error`: Node's AggregateError (every address of a name refused) carries them in `errors`. */
function systemError(error: unknown): NodeError {
  const outer = (typeof error === 'object' && error !== null ? error : {}) as NodeError;
  const inner = Array.isArray(outer.errors) ? (outer.errors.find((entry) => (entry as NodeError).port !== undefined) as NodeError | undefined) : undefined;
  return { ...inner, ...Object.fromEntries(Object.entries(outer).filter(([, value]) => value !== undefined)), code: outer.code ?? inner?.code };
}

/** One line: the variable, where it points, the system's code, and the question that leads to the fix. */
export function describeConnectionFailure(target: ServiceAddress, code: string): string {
  const where = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
  const hint =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN'
      ? `no such host; check the host name in ${target.variable}`
      : code === 'ECONNREFUSED'
        ? `is ${target.service} running, and listening on that address?`
        : `is ${target.service} reachable from this machine (firewall, network)?`;
  return `${target.variable}: cannot connect to ${where} (${code}) — ${hint}`;
}

/**
 * The message for a failure to start, naming the variable behind it, or null when the error is
 * none of these (the caller then prints it as it is). `env` is the environment the command read.
 */
export function explainStartError(error: unknown, env: Env): string | null {
  const failure = systemError(error);
  const code = failure.code;
  if (code === undefined) return null;
  if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
    const port = failure.port ?? env.PORT ?? '3000';
    const host = failure.address ?? env.HOST ?? '127.0.0.1';
    if (code === 'EADDRINUSE') return `PORT: ${port} is already in use on ${host} (EADDRINUSE) — stop what listens there, or set PORT to a free port`;
    if (code === 'EACCES') return `PORT: not allowed to listen on ${port} (EACCES) — ports below 1024 need privileges; set PORT to 1024 or above`;
    return `HOST: ${host} is not an address of this machine (EADDRNOTAVAIL) — set HOST to one of its addresses, or 0.0.0.0 for every interface`;
  }
  if (!CONNECTION_CODES.has(code)) return null;
  const services = servicesOf(env);
  const match =
    services.find((service) => failure.port === service.port && (failure.address === undefined || sameHost(failure.address, service.host))) ??
    services.find((service) => failure.hostname !== undefined && failure.hostname === service.host) ??
    (services.length === 1 ? services[0] : undefined);
  return match === undefined ? null : describeConnectionFailure(match, code);
}

/** Whether a connected address is the host a URL names (`localhost` is 127.0.0.1 or ::1). */
function sameHost(address: string, host: string): boolean {
  if (address === host) return true;
  return host === 'localhost' && (address === '127.0.0.1' || address === '::1');
}
