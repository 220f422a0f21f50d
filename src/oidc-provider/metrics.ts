/** @module The provider's metrics, added to /metrics by the capability: tokens issued by grant type. */
import type { MetricsExtension } from '../metrics/metrics.js';

export interface OidcMetrics extends MetricsExtension {
  /** Counts one successful token endpoint answer of `grantType`. */
  tokenIssued(grantType: string): void;
}

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token', 'client_credentials', 'urn:ietf:params:oauth:grant-type:device_code']);

export function createOidcMetrics(): OidcMetrics {
  const issued = new Map<string, number>();
  return {
    tokenIssued(grantType) {
      // Only the grants a client can be given: a label's values stay few whatever a request says.
      const label = GRANT_TYPES.has(grantType) ? (grantType.endsWith('device_code') ? 'device_code' : grantType) : 'other';
      issued.set(label, (issued.get(label) ?? 0) + 1);
    },
    register(prom, registry) {
      new prom.Counter({
        name: 'gatehouse_oidc_tokens_issued_total',
        help: 'Token endpoint answers with tokens this process gave, by grant type.',
        labelNames: ['grant_type'],
        registers: [registry],
        collect() {
          this.reset();
          for (const [grantType, count] of issued) this.inc({ grant_type: grantType }, count);
        },
      });
    },
  };
}
