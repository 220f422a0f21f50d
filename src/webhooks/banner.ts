/** @module The webhooks' line of the start banner: how many endpoints, and who delivers them. */
import type { BannerLine } from '../banner.js';
import type { Config } from '../config.js';

export function webhookLine(config: Readonly<Config>, counts: { total: number; enabled: number }): BannerLine {
  const { total, enabled } = counts;
  const delivery = config.webhooks.delivery;
  const details = { capability: 'webhooks', endpoints: total, enabled, delivery };
  if (config.encryptionKeys.length === 0 && config.generatedEncryptionKey === null) {
    return {
      level: total > 0 ? 'warn' : 'info',
      message: 'Webhooks are off: set ENCRYPTION_KEY_BASE64 to register endpoints and sign deliveries',
      details: { ...details, state: 'off' },
    };
  }
  if (total === 0) {
    return { level: 'info', message: "Webhooks: no endpoint registered (gatehouse webhooks create --url URL --event '*')", details };
  }
  const who = delivery === 'server' ? 'delivered by this server' : 'delivered only by `gatehouse webhooks worker` (WEBHOOK_DELIVERY=worker)';
  return { level: 'info', message: `Webhooks: ${total} endpoint${total === 1 ? '' : 's'} (${enabled} enabled), ${who}`, details };
}
