/** @module The audit trail's settings: how long its rows are kept. */
import { defineSettings } from '../settings.js';

export interface AuditSettings {
  /** AUDIT_RETENTION_DAYS: audit rows older than this are deleted by the hourly sweep. */
  auditRetentionDays: number;
}

export const auditSettings = defineSettings({
  name: 'audit',
  variables: [{ name: 'AUDIT_RETENTION_DAYS', default: '365', meaning: 'days audit rows are kept; older ones are deleted by the hourly sweep (1 to 36500)' }],
  read: (reader): AuditSettings => ({ auditRetentionDays: reader.integer('AUDIT_RETENTION_DAYS', 365, 1, 36_500) }),
});
