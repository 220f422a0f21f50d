/** @module Webhooks' settings: how long one attempt may take, who delivers, and the address rule's switch. */
import { defineSettings } from '../settings.js';

export interface WebhookConfig {
  /** The whole of one attempt: connect, send, read at most 64 KiB of the answer. */
  timeoutMs: number;
  /** 'server': every server process delivers; 'worker': only `gatehouse webhooks worker` does. */
  delivery: 'server' | 'worker';
  /** Lifts the address rule (loopback, private, link-local, …); production still needs https. */
  allowPrivateNetworks: boolean;
  /** Production: an endpoint's URL must be https. */
  requireHttps: boolean;
}

export interface WebhookSettings {
  webhooks: Readonly<WebhookConfig>;
}

export const webhookSettings = defineSettings({
  name: 'webhooks',
  variables: [
    { name: 'WEBHOOK_TIMEOUT', default: '10s', meaning: 'time one webhook attempt may take, answer included (1s to 60s)' },
    {
      name: 'WEBHOOK_DELIVERY',
      default: 'server',
      meaning: 'server: every server process delivers webhooks; worker: only `gatehouse webhooks worker` processes do',
    },
    {
      name: 'WEBHOOK_ALLOW_PRIVATE_NETWORKS',
      default: 'false',
      meaning: 'true: webhooks may go to loopback, private and link-local addresses (in production they are refused; https is still required there)',
    },
  ],
  read: (reader, { mode }): WebhookSettings => {
    const timeoutMs = reader.durationMs('WEBHOOK_TIMEOUT', 10_000, 1_000, 60_000, '1s to 60s');
    const rawDelivery = reader.read('WEBHOOK_DELIVERY') ?? 'server';
    if (rawDelivery !== 'server' && rawDelivery !== 'worker') reader.problem(`WEBHOOK_DELIVERY: expected server or worker, got "${rawDelivery}"`);
    const production = mode === 'production';
    // Outside production an app on this machine is the usual receiver: http and loopback are fine.
    const allowPrivateNetworks = reader.boolean('WEBHOOK_ALLOW_PRIVATE_NETWORKS', false) || !production;
    return {
      webhooks: Object.freeze({ timeoutMs, delivery: rawDelivery === 'worker' ? 'worker' : 'server', allowPrivateNetworks, requireHttps: production }),
    };
  },
});
