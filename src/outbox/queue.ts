/** @module Queues one rendered email; called inside the transaction that creates its token. */
import { randomUUID } from 'node:crypto';
import type { OutboxStore } from './outbox.js';
import type { RenderedEmail } from './templates.js';

/** `linkExpiresAt`: when the link inside stops working (the row is purged then); null for a notice that carries no secret. */
export async function queueEmail(
  outbox: Pick<OutboxStore, 'enqueueEmail'>,
  recipient: string,
  email: RenderedEmail,
  options: { now: Date; linkExpiresAt: Date | null },
): Promise<void> {
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
