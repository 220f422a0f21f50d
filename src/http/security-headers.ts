/**
 * @module The headers every API answer and every page carries, computed once: only the
 * Content-Security-Policy differs between the two.
 */

export function securityHeaders(options: { contentSecurityPolicy: string; httpsBaseUrl: boolean }): ReadonlyArray<[string, string]> {
  return Object.entries({
    'Content-Security-Policy': options.contentSecurityPolicy,
    // Reset and verification tokens sit in page URLs: no Referer may carry them elsewhere.
    'Referrer-Policy': 'no-referrer',
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    // Answers about who is signed in, and pages holding tokens, must never be cached.
    'Cache-Control': 'no-store',
    // HSTS wherever people reach the service over HTTPS (BASE_URL), in every mode and whatever
    // transport reaches Gatehouse itself (DESIGN §9.8); on plain-HTTP setups it would pin browsers
    // to an HTTPS that does not exist.
    ...(options.httpsBaseUrl ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  });
}

/** What every API answer carries (the app's edge, the server's own refusals, the session check's fast path), as a plain record. */
export function apiSecurityHeaders(options: { httpsBaseUrl: boolean }): Readonly<Record<string, string>> {
  return Object.freeze(
    Object.fromEntries(securityHeaders({ contentSecurityPolicy: "default-src 'none'; frame-ancestors 'none'", httpsBaseUrl: options.httpsBaseUrl })),
  );
}
