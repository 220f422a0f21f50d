/** @module The sessions' settings: the signing secret, lifetimes and the cookie's name. */
import { defineSettings, parseDurationSeconds } from '../settings.js';

export interface SessionSettings {
  /** null only outside production, until the server fills it from the data folder. */
  jwtSecret: string | null;
  sessionExpiresInSeconds: number;
  /**
   * SESSION_IDLE_TIMEOUT: a session not seen for longer is refused; null: off. Checked against the
   * `lastSeenAt` the session check already loads, refreshed at most once a minute, so a session is
   * refused only once idle for longer than this plus that minute (session/flow.ts).
   */
  sessionIdleTimeoutSeconds: number | null;
  sessionCookieName: string;
}

export const sessionSettings = defineSettings({
  name: 'sessions',
  variables: [
    {
      name: 'JWT_SECRET',
      default: '',
      meaning: 'signs session JWTs, at least 32 characters; required in production, otherwise generated once into <data folder>/jwt-secret',
    },
    { name: 'SESSION_EXPIRES_IN', default: '86400', meaning: 'session lifetime in seconds (60 to 31536000)' },
    {
      name: 'SESSION_IDLE_TIMEOUT',
      default: '',
      meaning: 'a session not used for this long is refused, as 30m or 8h (1m to 365 days; up to a minute longer in effect); unset or 0: no idle timeout',
    },
    {
      name: 'SESSION_COOKIE_NAME',
      default: '',
      meaning:
        'name of the session cookie (unset: __Host-gatehouse_session with an https BASE_URL, else gatehouse_session; production: must start with __Host-)',
    },
  ],
  read: (reader, { mode, httpsBaseUrl }): SessionSettings => {
    const jwtSecret = reader.read('JWT_SECRET') ?? null;
    if (jwtSecret === null && mode === 'production') {
      reader.problem('JWT_SECRET: required in production; set it to a random string of at least 32 characters (for example: openssl rand -base64 48)');
    } else if (jwtSecret !== null && jwtSecret.length < 32) {
      reader.problem('JWT_SECRET: must be at least 32 characters');
    }

    const sessionExpiresInSeconds = reader.integer('SESSION_EXPIRES_IN', 86400, 60, 31_536_000);
    let sessionIdleTimeoutSeconds: number | null = null;
    const rawIdleTimeout = reader.read('SESSION_IDLE_TIMEOUT');
    // Unset, empty or zero (0, 0s, 0m, 0h): no idle timeout, the default.
    if (rawIdleTimeout !== undefined && !/^0+\s*[smh]?$/.test(rawIdleTimeout)) {
      const seconds = parseDurationSeconds(rawIdleTimeout);
      if (seconds === null || seconds < 60 || seconds > 31_536_000) {
        reader.problem(`SESSION_IDLE_TIMEOUT: expected a duration from 1m to 8760h (365 days), such as 30m or 8h, or 0 for none, got "${rawIdleTimeout}"`);
      } else {
        sessionIdleTimeoutSeconds = seconds;
      }
    }

    const rawSessionCookieName = reader.read('SESSION_COOKIE_NAME');
    const sessionCookieName = rawSessionCookieName ?? (httpsBaseUrl ? '__Host-gatehouse_session' : 'gatehouse_session');
    if (mode === 'production' && httpsBaseUrl && rawSessionCookieName !== undefined && !rawSessionCookieName.startsWith('__Host-')) {
      // Without the prefix, a sibling subdomain (or a plain-http page on this host) can set a
      // cookie of that name and fix the session the browser presents.
      reader.problem(`SESSION_COOKIE_NAME: in production the name must start with __Host- (so no other site can set it), got "${rawSessionCookieName}"`);
    }
    if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(sessionCookieName)) {
      reader.problem("SESSION_COOKIE_NAME: expected a cookie name (letters, digits and !#$%&'*+-.^_`|~)");
    } else if (/^__(host|secure)-/i.test(sessionCookieName) && !httpsBaseUrl) {
      // Browsers accept __Host- and __Secure- cookies only with Secure, which is set only with an
      // https BASE_URL: otherwise such a name would make every sign-in fail.
      reader.problem('SESSION_COOKIE_NAME: a __Host- or __Secure- name needs an https:// BASE_URL (the cookie is Secure only then)');
    }
    return { jwtSecret, sessionExpiresInSeconds, sessionIdleTimeoutSeconds, sessionCookieName };
  },
});
