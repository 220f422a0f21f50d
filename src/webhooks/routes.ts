/**
 * @module The admin API's webhook routes, `/api/admin/webhooks…`, behind the admin key check
 * (admin/routes.ts adminKeyCheck: RATE_LIMIT_ADMIN, then the key), mounted only with ADMIN_API_KEY.
 */
import { Hono } from 'hono';
import { z } from 'zod';
import type { Operator } from '../admin/flow.js';
import { parse } from '../admin/input.js';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import type { RouteDoc } from '../http/route-docs.js';
import type { MiddlewareHandler } from 'hono';
import {
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhookDeliveries,
  retryWebhookDelivery,
  rotateWebhookSecret,
  testWebhook,
  updateWebhook,
  type WebhookAdminDeps,
} from './flow.js';
import { DEFAULT_DELIVERY_PAGE, createWebhookBody, deliveriesQuery, deliveryParams, isWebhookId, updateWebhookBody, webhookIdParam } from './input.js';

function operatorOf(ctx: { ip: string; userAgent: string | null; now: Date }): Operator {
  return { actor: 'admin', ip: ctx.ip, userAgent: ctx.userAgent, now: ctx.now };
}

/** An id that is not a UUID is no endpoint: 404 before any query. */
function webhookId(raw: string): string {
  if (!isWebhookId(raw)) throw notFound('There is no webhook endpoint with this id.');
  return raw;
}

export function createWebhookRoutes(deps: { flow: WebhookAdminDeps; requireAdminKey: MiddlewareHandler<AppEnv> }): Hono<AppEnv> {
  const { flow } = deps;
  return new Hono<AppEnv>()
    .use('/webhooks', deps.requireAdminKey)
    .use('/webhooks/*', deps.requireAdminKey)
    .get('/webhooks', async (c) => jsonAnswer(c, { webhooks: await flow.endpoints.listEndpoints() }))
    .post('/webhooks', async (c) => {
      const body = await readJsonBody(c, createWebhookBody);
      return jsonAnswer(c, await createWebhook(flow, body, operatorOf(c.get('requestContext'))), 201);
    })
    .get('/webhooks/:id', async (c) => jsonAnswer(c, { webhook: await findWebhook(flow, webhookId(c.req.param('id'))) }))
    .patch('/webhooks/:id', async (c) => {
      const id = webhookId(c.req.param('id'));
      const body = await readJsonBody(c, updateWebhookBody);
      return jsonAnswer(c, await updateWebhook(flow, id, body, operatorOf(c.get('requestContext'))));
    })
    .delete('/webhooks/:id', async (c) => {
      await acceptNoBody(c);
      return jsonAnswer(c, await deleteWebhook(flow, webhookId(c.req.param('id')), operatorOf(c.get('requestContext'))));
    })
    .post('/webhooks/:id/secret', async (c) => {
      await acceptNoBody(c);
      return jsonAnswer(c, await rotateWebhookSecret(flow, webhookId(c.req.param('id')), operatorOf(c.get('requestContext'))));
    })
    .post('/webhooks/:id/test', async (c) => {
      await acceptNoBody(c);
      return jsonAnswer(c, await testWebhook(flow, webhookId(c.req.param('id')), c.get('requestContext').now), 202);
    })
    .get('/webhooks/:id/deliveries', async (c) => {
      const id = webhookId(c.req.param('id'));
      const query = parse(deliveriesQuery, c.req.query());
      const page = await listWebhookDeliveries(flow, id, {
        status: query.status ?? null,
        cursor: query.cursor ?? null,
        limit: query.limit ?? DEFAULT_DELIVERY_PAGE,
      });
      return jsonAnswer(c, page);
    })
    .post('/webhooks/:id/deliveries/:deliveryId/retry', async (c) => {
      await acceptNoBody(c);
      const id = webhookId(c.req.param('id'));
      const deliveryId = c.req.param('deliveryId');
      if (!isWebhookId(deliveryId)) throw notFound('This endpoint has no delivery with this id.');
      return jsonAnswer(c, await retryWebhookDelivery(flow, id, deliveryId, c.get('requestContext').now));
    });
}

const webhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  enabled: z.boolean(),
  disabledReason: z.enum(['manual', 'failing']).nullable().describe('failing: disabled after 5 days of failed attempts'),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const delivery = z.object({
  id: z.string(),
  eventId: z.string().describe('the webhook-id header of every attempt'),
  type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.array(z.object({ at: z.string(), statusCode: z.number().int().nullable(), durationMs: z.number().int(), error: z.string().nullable() })),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
});
const secretAnswer = z.string().describe('whsec_…: shown once, never again');

const doc = (route: Omit<RouteDoc, 'tag' | 'auth'>): RouteDoc => ({ tag: 'Webhooks', auth: 'admin-key', ...route });

/** Mounted under /api/admin only while ADMIN_API_KEY is set. */
export const webhookRouteDocs: RouteDoc[] = [
  doc({
    method: 'get',
    path: '/webhooks',
    summary: 'The webhook endpoints',
    answers: [{ status: 200, description: 'Every endpoint, oldest first.', json: z.object({ webhooks: z.array(webhook) }) }],
  }),
  doc({
    method: 'post',
    path: '/webhooks',
    summary: 'Register an endpoint; its signing secret is in this answer only',
    body: createWebhookBody,
    answers: [{ status: 201, description: 'Registered, and audited (webhook_created).', json: z.object({ webhook, secret: secretAnswer }) }],
    errors: ['invalid_webhook_url', 'webhook_limit_reached', 'service_unavailable'],
  }),
  doc({
    method: 'get',
    path: '/webhooks/:id',
    summary: 'One endpoint',
    params: webhookIdParam,
    answers: [{ status: 200, description: 'The endpoint.', json: z.object({ webhook }) }],
    errors: ['not_found'],
  }),
  doc({
    method: 'patch',
    path: '/webhooks/:id',
    summary: 'Change its URL, events or description, or disable and enable it',
    params: webhookIdParam,
    body: updateWebhookBody,
    answers: [{ status: 200, description: 'Changed, and audited (webhook_updated).', json: z.object({ webhook }) }],
    errors: ['not_found', 'invalid_webhook_url'],
  }),
  doc({
    method: 'delete',
    path: '/webhooks/:id',
    summary: 'Delete the endpoint and its deliveries',
    params: webhookIdParam,
    body: 'none',
    answers: [{ status: 200, description: 'Deleted, and audited (webhook_deleted).', json: z.object({ deleted: z.literal(true) }) }],
    errors: ['not_found'],
  }),
  doc({
    method: 'post',
    path: '/webhooks/:id/secret',
    summary: 'Rotate the signing secret: for 24 hours every attempt carries both signatures',
    params: webhookIdParam,
    body: 'none',
    answers: [
      {
        status: 200,
        description: 'The new secret (shown once), audited (webhook_secret_rotated).',
        json: z.object({ secret: secretAnswer, previousSecretExpiresAt: z.string() }),
      },
    ],
    errors: ['not_found', 'service_unavailable'],
  }),
  doc({
    method: 'post',
    path: '/webhooks/:id/test',
    summary: 'Send a webhook.test event to this endpoint now, whatever its events filter',
    params: webhookIdParam,
    body: 'none',
    answers: [{ status: 202, description: 'Queued and being sent; see its deliveries.', json: z.object({ eventId: z.string() }) }],
    errors: ['not_found', 'webhook_disabled'],
  }),
  doc({
    method: 'get',
    path: '/webhooks/:id/deliveries',
    summary: 'Its deliveries, newest first, with every attempt',
    params: webhookIdParam,
    query: deliveriesQuery,
    answers: [{ status: 200, description: 'A page of deliveries.', json: z.object({ deliveries: z.array(delivery), nextCursor: z.string().nullable() }) }],
    errors: ['not_found', 'validation_error'],
  }),
  doc({
    method: 'post',
    path: '/webhooks/:id/deliveries/:deliveryId/retry',
    summary: 'Attempt a pending or failed delivery now',
    params: deliveryParams,
    body: 'none',
    answers: [{ status: 200, description: 'Due now; the worker attempts it at once.', json: z.object({ delivery }) }],
    errors: ['not_found', 'already_delivered'],
  }),
];
