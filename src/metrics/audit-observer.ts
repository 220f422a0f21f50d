/**
 * @module Sign-ins and locks counted from the audit records the flows already write, so no flow
 * carries a metrics call: `login_success` is a success, `login_failure` a failure (or `locked` /
 * `rate_limited` by its reason), `mfa_failure` a failed second step, and `lockStarted: true` in
 * a failure's metadata a lock that started. Re-authentication inside the account pages is not a
 * sign-in and counts only toward locks. (`mfa_required` has no audit row: the routes that issue
 * the second-factor challenge count it.)
 */
import type { AuditEvent, AuditStore } from '../audit/audit-log.js';
import type { Stores } from '../stores.js';
import type { MetricsRecorder } from './recorder.js';

const NOT_A_SIGN_IN = 'reauthentication';

export function countAuditEvent(metrics: MetricsRecorder, event: AuditEvent): void {
  const { type, metadata } = event;
  if (type !== 'login_success' && type !== 'login_failure' && type !== 'mfa_failure') return;
  if (metadata.lockStarted === true) metrics.lockStarted();
  const method = typeof metadata.method === 'string' ? metadata.method : 'unknown';
  if (method === NOT_A_SIGN_IN) return;
  if (type === 'login_success') return metrics.login('success', method);
  const reason = metadata.reason;
  if (reason === 'locked') return metrics.login('locked', method);
  // `busy`: too many attempts in flight at once for one email, answered 429 rate_limited too.
  if (reason === 'rate_limited' || reason === 'busy') return metrics.login('rate_limited', method);
  metrics.login('failure', method);
}

function observedAudit(audit: AuditStore, metrics: MetricsRecorder): AuditStore {
  return {
    ...audit,
    recordEvent: async (event) => {
      await audit.recordEvent(event);
      countAuditEvent(metrics, event);
    },
  };
}

/** `stores` whose audit store (also inside transactions) tells `metrics` of each event it records. */
export function observeAuditEvents(stores: Stores, metrics: MetricsRecorder): Stores {
  const wrap = (inner: Stores): Stores => {
    const outer: Stores = {
      ...inner,
      audit: observedAudit(inner.audit, metrics),
      // A nested call joins the outer transaction and hands back the same stores.
      transaction: (work) => inner.transaction((tx) => work(tx === inner ? outer : wrap(tx))),
    };
    return outer;
  };
  return wrap(stores);
}
