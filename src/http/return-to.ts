/**
 * @module Where to send the browser after signing in (password pages or provider). Only a path on this origin is
 * accepted: anything that a browser could read as another host (`//evil`, `/\evil`,
 * `https://evil`, tabs or newlines that browsers strip) falls back to the default, so the
 * sign-in can never be used as an open redirect (RFC 6749 §10.15).
 */

const MAX_RETURN_TO_CHARS = 2048;

/** `raw` when it is a same-origin path, else `fallback`. */
export function resolveReturnTo(raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw.length === 0 || raw.length > MAX_RETURN_TO_CHARS) return fallback;
  if (!raw.startsWith('/') || raw.startsWith('//')) return fallback;
  // Browsers treat `\` as `/` in URLs and drop tabs and newlines, so `/\evil.com` and
  // `/\t/evil.com` both become `//evil.com`: refuse backslashes and every control character.
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  if (raw.includes('\\') || /[\u0000-\u001f\u007f]/.test(raw)) return fallback;
  // Belt and braces: resolved against any origin, the path must stay on that origin.
  const probe = new URL(raw, 'http://gatehouse.invalid');
  if (probe.origin !== 'http://gatehouse.invalid') return fallback;
  return raw;
}
