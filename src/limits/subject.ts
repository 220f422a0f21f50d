/**
 * @module Who a counter counts: a client IP, an email, a user, a device, an OpenID Connect client or an organization. Store keys hold a
 * SHA-256 of the subject, never the email itself, so Redis and PostgreSQL keep no addresses.
 */
import { hash } from 'node:crypto';

export type LimitSubject = { ip: string } | { email: string } | { userId: string } | { device: string } | { client: string } | { organization: string };

export function subjectKey(subject: LimitSubject): string {
  const [kind, value] = Object.entries(subject)[0] as [string, string];
  // 128 bits of the hash: collisions are out of reach, keys stay short. One-shot (no Hash object):
  // every limited request computes at least one, a refused one included.
  return `${kind}:${hash('sha256', `${kind}:${value}`, 'base64url').slice(0, 22)}`;
}
