/**
 * @module The headers every API answer and every page carries, computed once: only the
 * Content-Security-Policy differs between the two.
 */

export function securityHeaders(options: { contentSecurityPolicy: string; production: boolean }): ReadonlyArray<[string, string]> {
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
    // HSTS only where the service is served over HTTPS; on plain-HTTP development setups it
    // would pin browsers to an HTTPS that does not exist.
    ...(options.production ? { 'Strict-Transport-Security': 'max-age=31536000; includeSubDomains' } : {}),
  });
}
