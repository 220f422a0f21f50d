/** @module What a flow knows of the request that started it: no Request object, no headers. */

export interface RequestContext {
  /** The client IP as resolved under TRUST_PROXY. */
  ip: string;
  /** Truncated to what the audit column holds. */
  userAgent: string | null;
  /** Read once per request so every rule in one request sees the same instant. */
  now: Date;
  requestId: string;
}
