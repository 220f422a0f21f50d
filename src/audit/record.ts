/** @module Writes one audit event stamped with the request's IP, user agent and instant. */
import type { RequestContext } from '../request-context.js';
import type { AuditEventType, AuditMetadata, AuditStore } from './audit-log.js';

export async function recordAudit(audit: AuditStore, ctx: RequestContext, type: AuditEventType, userId: string | null, metadata: AuditMetadata): Promise<void> {
  await audit.recordEvent({ type, userId, ip: ctx.ip, userAgent: ctx.userAgent, metadata, at: ctx.now });
}
