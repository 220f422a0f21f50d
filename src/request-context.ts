/** @module What a flow knows of the request that started it: no Request object, no headers. */

import type { Language } from './i18n/languages.js';

/** The longest user agent kept (the audit column's width); a longer one is cut. */
export const MAX_USER_AGENT_CHARS = 512;

export interface RequestContext {
  /** The client IP as resolved under TRUST_PROXY. */
  ip: string;
  /** Truncated to what the audit column holds. */
  userAgent: string | null;
  /** Read once per request so every rule in one request sees the same instant. */
  now: Date;
  requestId: string;
  /**
   * The language the request carries (the pages' `gatehouse_lang` cookie, then Accept-Language;
   * null: none), remembered on an account created or signed in from a page. Absent where a
   * request context is built outside the HTTP edge.
   */
  language?: Language | null;
}
