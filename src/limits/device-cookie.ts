/**
 * @module The device cookie on the wire: HttpOnly, SameSite=Lax, Path=/, Secure with an https
 * BASE_URL, kept 180 days. Then its name has the `__Host-` prefix, like the session cookie's, so a
 * sibling subdomain cannot plant one. One per browser: the last account that logged in there.
 */
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import { addAnswerCookie } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';

export const DEVICE_COOKIE_MAX_AGE_SECONDS = 180 * 24 * 60 * 60;

export interface DeviceCookieSettings {
  name: string;
  secure: boolean;
}

/** Secure and `__Host-` prefixed when BASE_URL is https, like the session cookie. */
export function deviceCookieSettings(httpsBaseUrl: boolean): DeviceCookieSettings {
  return httpsBaseUrl ? { name: '__Host-gatehouse_device', secure: true } : { name: 'gatehouse_device', secure: false };
}

export function setDeviceCookie(c: Context<AppEnv>, settings: DeviceCookieSettings, value: string, now: Date): void {
  addAnswerCookie(c, settings.name, value, {
    httpOnly: true,
    secure: settings.secure,
    sameSite: 'Lax',
    path: '/',
    maxAge: DEVICE_COOKIE_MAX_AGE_SECONDS,
    expires: new Date(now.getTime() + DEVICE_COOKIE_MAX_AGE_SECONDS * 1000),
  });
}

export function readDeviceCookie(c: Context, settings: DeviceCookieSettings): string | undefined {
  return getCookie(c, settings.name);
}
