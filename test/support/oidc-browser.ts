/**
 * A browser for tests of Gatehouse as an OpenID Connect provider, without Chromium: one cookie
 * jar for Gatehouse's origin, redirects followed by hand while they stay on that origin, so a test
 * sees each step (the sign-in page, the consent page) and the final redirect to the app.
 */
export interface TestBrowser {
  /** Follows redirects from `url` until one leaves Gatehouse's origin or an answer is not a redirect. */
  open(url: string | URL, init?: { method?: string; form?: Record<string, string> }): Promise<{ url: URL; response: Response | null }>;
  /** Signs in through the JSON API, as the /login page's script does; the session cookie joins the jar. */
  signIn(email: string, password: string): Promise<void>;
  /** A JSON POST to Gatehouse's API from the page's origin, its cookies kept (the code step, 2FA setup). */
  post(path: string, body: unknown): Promise<Response>;
  cookieHeader(): string;
  /** Forgets one cookie (a session that ended elsewhere). */
  forget(name: string): void;
}

export function createTestBrowser(origin: string): TestBrowser {
  const jar = new Map<string, string>();
  const cookieHeader = (): string => [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
  const keep = (response: Response): void => {
    for (const header of response.headers.getSetCookie()) {
      const [pair] = header.split(';');
      const at = pair!.indexOf('=');
      const name = pair!.slice(0, at);
      const value = pair!.slice(at + 1);
      if (value === '' || /max-age=0|expires=Thu, 01 Jan 1970/i.test(header)) jar.delete(name);
      else jar.set(name, value);
    }
  };
  return {
    async open(start, init = {}) {
      let url = new URL(start, origin);
      let method = init.method ?? 'GET';
      let body: string | undefined = init.form === undefined ? undefined : new URLSearchParams(init.form).toString();
      for (let hop = 0; hop < 15; hop += 1) {
        if (url.origin !== origin) return { url, response: null };
        const headers: Record<string, string> = { cookie: cookieHeader(), accept: 'text/html' };
        if (body !== undefined) Object.assign(headers, { 'content-type': 'application/x-www-form-urlencoded', origin });
        const response = await fetch(url, { method, headers, body, redirect: 'manual' });
        keep(response);
        const location = response.headers.get('location');
        if (response.status < 300 || response.status >= 400 || location === null) return { url, response };
        url = new URL(location, url);
        method = 'GET';
        body = undefined;
      }
      throw new Error('too many redirects');
    },
    async signIn(email, password) {
      const response = await fetch(new URL('/api/auth/login', origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, cookie: cookieHeader() },
        body: JSON.stringify({ email, password }),
      });
      if (response.status !== 200) throw new Error(`sign-in answered ${response.status}: ${await response.text()}`);
      keep(response);
    },
    async post(path, body) {
      const response = await fetch(new URL(path, origin), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin, cookie: cookieHeader() },
        body: JSON.stringify(body),
      });
      keep(response);
      return response;
    },
    cookieHeader,
    forget: (name) => void jar.delete(name),
  };
}
