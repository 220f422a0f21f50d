/**
 * @module The session cookie (SPEC §5): HttpOnly, SameSite=Lax, Path=/, Max-Age, Secure with an
 * https BASE_URL (in every mode). The name then defaults to `__Host-gatehouse_session`, a prefix
 * browsers enforce (Secure, Path=/, no Domain) so a sibling subdomain cannot plant or shadow it.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { addAnswerCookie, clearAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';

export interface SessionCookieSettings {
  name: string;
  secure: boolean;
}

export function setSessionCookie(c: Context<AppEnv>, settings: SessionCookieSettings, token: string, expiresAt: Date, now: Date): void {
  addAnswerCookie(c, settings.name, token, {
    httpOnly: true,
    secure: settings.secure,
    sameSite: 'Lax',
    path: '/',
    maxAge: Math.max(0, Math.round((expiresAt.getTime() - now.getTime()) / 1000)),
    expires: expiresAt,
  });
}

export function clearSessionCookie(c: Context<AppEnv>, settings: SessionCookieSettings): void {
  clearAnswerCookie(c, settings.name, { path: '/', secure: settings.secure, httpOnly: true, sameSite: 'Lax' });
}

export function readSessionCookie(c: Context, settings: SessionCookieSettings): string | undefined {
  return getCookie(c, settings.name);
}
