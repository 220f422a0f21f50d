/** @module What the webhook routes and commands accept: endpoint bodies and the deliveries query. */
import { z } from 'zod';
import { MAX_PAGE_SIZE, USER_ID } from '../admin/input.js';
import { WEBHOOK_EVENT_TYPES } from './events.js';

const events = z
  .array(z.string().max(64))
  .min(1, 'must name at least one event, or ["*"]')
  .max(WEBHOOK_EVENT_TYPES.length, 'names an event twice')
  .superRefine((names, ctx) => {
    if (names.includes('*') && names.length > 1) ctx.addIssue({ code: 'custom', message: 'is ["*"] alone, or a list of event names' });
    const unknown = names.filter((name) => name !== '*' && !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(name));
    if (unknown.length > 0) ctx.addIssue({ code: 'custom', message: `has unknown events: ${unknown.join(', ')} (known: ${WEBHOOK_EVENT_TYPES.join(', ')})` });
    if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'names an event twice' });
  })
  .describe('event names, or ["*"] for every event');
const url = z.string().min(1).max(2048, 'must be at most 2048 characters').describe('where events are POSTed (https in production)');
const description = z.string().max(200, 'must be at most 200 characters').nullable().optional();

export const createWebhookBody = z.strictObject({ url, events, description });
export const updateWebhookBody = z
  .strictObject({ url: url.optional(), events: events.optional(), description, enabled: z.boolean().optional() })
  .refine((body) => Object.keys(body).length > 0, 'must change something: url, events, description or enabled');

export const webhookIdParam = z.object({ id: z.string().regex(USER_ID).describe('a webhook id (UUID)') });
export const deliveryParams = webhookIdParam.extend({ deliveryId: z.string().regex(USER_ID).describe('a delivery id (UUID)') });

export const DEFAULT_DELIVERY_PAGE = 50;
export const deliveriesQuery = z.object({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  // The store's cursor is the last position shown, in decimal (db/webhook-delivery-store.ts).
  cursor: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, 'is not a cursor from this list')
    .optional(),
  limit: z
    .string()
    .regex(/^\d{1,3}$/, `must be a whole number from 1 to ${MAX_PAGE_SIZE}`)
    .transform(Number)
    .pipe(z.number().int().min(1).max(MAX_PAGE_SIZE))
    .optional(),
});

/** Ids are UUIDs: anything else is no endpoint (and reaches no query). */
export function isWebhookId(text: string): boolean {
  return USER_ID.test(text);
}
