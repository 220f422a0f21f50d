/**
 * @module A session's user-agent string in a person's words: the browser's and the operating
 * system's names ("Chrome", "Linux"), read by `bowser`, so /account can say "Chrome on Linux" in
 * the page's language instead of showing the raw string. The names are products' own names and
 * need no translation; the words around them are the page's (`script.account.browserOn`).
 */
import Bowser from 'bowser';

export interface Device {
  /** The browser's name, or null when the string names none bowser knows. */
  browser: string | null;
  /** The operating system's name, or null when unknown. */
  os: string | null;
}

/** The longest string looked at: sessions keep at most 512 characters anyway (app.ts). */
const MAX_USER_AGENT_CHARS = 512;

export function describeDevice(userAgent: string | null): Device {
  if (userAgent === null || userAgent.trim() === '') return { browser: null, os: null };
  // bowser throws only on an empty string; a name is kept only when it is one (not '').
  const parsed = Bowser.parse(userAgent.slice(0, MAX_USER_AGENT_CHARS));
  const name = (value: string | undefined): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);
  return { browser: name(parsed.browser.name), os: name(parsed.os.name) };
}
