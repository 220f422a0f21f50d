/** @module Queues one rendered email; called inside the transaction that creates its token. */
import { randomUUID } from 'node:crypto';
import type { OutboxStore } from './outbox.js';
import type { RenderedEmail } from './templates.js';

export async function queueEmail(outbox: OutboxStore, recipient: string, email: RenderedEmail, options: { now: Date; linkExpiresAt: Date }): Promise<void> {
  await outbox.enqueueEmail({
    id: randomUUID(),
    recipient,
    template: email.template,
    subject: email.subject,
    text: email.text,
    html: email.html,
    createdAt: options.now,
    expiresAt: options.linkExpiresAt,
  });
}
