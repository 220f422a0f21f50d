/**
 * @module 405 for a known path asked with a method it does not serve (`GET /api/auth/login`),
 * with `Allow` naming those it does (RFC 9110 §15.5.6): a 404 would say the path does not exist,
 * and send the developer looking for a typo in it.
 */

interface RouteEntry {
  readonly method: string;
  readonly path: string;
}

/** A route's path as a pattern: `:name` is one segment, `*` anything. */
function pathPattern(path: string): RegExp {
  const source = path
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

/**
 * The methods served at `path`, as `Allow` lists them (HEAD beside GET, which answers it); empty
 * when none is, the path being unknown. Middleware (`ALL`) serves no method of its own.
 */
export function createAllowedMethods(routes: () => readonly RouteEntry[]): (path: string) => string[] {
  let compiled: { method: string; pattern: RegExp }[] | null = null;
  return (path) => {
    // Compiled at the first miss: the routes are all registered by then.
    compiled ??= routes()
      .filter((route) => route.method !== 'ALL')
      .map((route) => ({ method: route.method, pattern: pathPattern(route.path) }));
    const methods = new Set(compiled.filter((route) => route.pattern.test(path)).map((route) => route.method));
    if (methods.has('GET')) methods.add('HEAD');
    return [...methods].sort();
  };
}
