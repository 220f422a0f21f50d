/**
 * @module The admin API's OpenID Connect client routes, `/api/admin/clients…`, behind the admin
 * key check (admin/routes.ts adminKeyCheck), mounted only with ADMIN_API_KEY. They are thin: the
 * rules (redirect URIs, grants, the secret shown once, the audit rows) live in clients.ts, which
 * the CLI calls too, so both surfaces refuse and record the same things. The body schemas here
 * check shapes only, and refuse unknown fields, so a misspelt option is an error rather than
 * silently ignored.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import type { Operator } from '../admin/flow.js';
import { notFound } from '../errors.js';
import { jsonAnswer } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody, readJsonBody } from '../http/json-body.js';
import type { RouteDoc } from '../http/route-docs.js';
import { deleteClient, findClient, registerClient, rotateClientSecret, SUPPORTED_SCOPES, updateClient, type ClientAdminDeps } from './clients.js';
import { GRANT_NAMES, ID_TOKEN_ALGS } from './store.js';

const NO_SUCH_CLIENT = 'There is no client with this id.';
/** Client ids are 32 hex characters (clients.ts); anything outside this form is no client and reaches no query. */
const CLIENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

const uri = z.string().min(1).max(2048, 'must be at most 2048 characters');
const uris = (what: string) => z.array(uri).max(20, 'at most 20').describe(what);
const fields = {
  name: z.string().max(100, 'must be at most 100 characters').describe('shown on the consent page'),
  redirectUris: uris('exact redirect URIs: no wildcard, no fragment; https in production except loopback and private-use schemes').optional(),
  firstParty: z.boolean().describe('an app of your own: no consent page').optional(),
  grantTypes: z
    .array(z.enum(GRANT_NAMES))
    .max(GRANT_NAMES.length)
    .describe('default authorization_code and refresh_token; device_code is the device authorization grant')
    .optional(),
  scopes: z.array(z.enum(SUPPORTED_SCOPES)).max(SUPPORTED_SCOPES.length).describe('what it may ask for; openid always').optional(),
  postLogoutRedirectUris: uris('where it may send people after signing out').optional(),
  backchannelLogoutUri: uri.nullable().describe('where a sign-out is POSTed as a logout token').optional(),
  idTokenSignedResponseAlg: z.enum(ID_TOKEN_ALGS).describe('default ES256').optional(),
};

export const createClientBody = z.strictObject({
  ...fields,
  public: z.boolean().describe('an SPA, mobile or desktop app: no secret, PKCE required').optional(),
});
export const updateClientBody = z
  .strictObject({ ...fields, name: fields.name.optional() })
  .refine((body) => Object.values(body).some((value) => value !== undefined), 'must change something');

export const clientIdParam = z.object({ id: z.string().regex(CLIENT_ID).describe('a client id') });

function operatorOf(ctx: { ip: string; userAgent: string | null; now: Date }): Operator {
  return { actor: 'admin', ip: ctx.ip, userAgent: ctx.userAgent, now: ctx.now };
}

/** The form of a client id; the CLI checks its arguments with it too. */
export function isClientId(text: string): boolean {
  return CLIENT_ID.test(text);
}

function clientId(raw: string): string {
  if (!isClientId(raw)) throw notFound(NO_SUCH_CLIENT);
  return raw;
}

export function createClientRoutes(deps: { clients: ClientAdminDeps; requireAdminKey: MiddlewareHandler<AppEnv> }): Hono<AppEnv> {
  const { clients } = deps;
  return new Hono<AppEnv>()
    .use('/clients', deps.requireAdminKey)
    .use('/clients/*', deps.requireAdminKey)
    .get('/clients', async (c) => jsonAnswer(c, { clients: await clients.clients.listClients() }))
    .post('/clients', async (c) => {
      const body = await readJsonBody(c, createClientBody);
      const { client, clientSecret } = await registerClient(clients, operatorOf(c.get('requestContext')), body);
      return jsonAnswer(c, clientSecret === null ? { client } : { client, clientSecret }, 201);
    })
    .get('/clients/:id', async (c) => jsonAnswer(c, { client: await findClient(clients, clientId(c.req.param('id'))) }))
    .patch('/clients/:id', async (c) => {
      const id = clientId(c.req.param('id'));
      const body = await readJsonBody(c, updateClientBody);
      return jsonAnswer(c, { client: await updateClient(clients, operatorOf(c.get('requestContext')), id, body) });
    })
    .delete('/clients/:id', async (c) => {
      await acceptNoBody(c);
      await deleteClient(clients, operatorOf(c.get('requestContext')), clientId(c.req.param('id')));
      return jsonAnswer(c, { deleted: true });
    })
    .post('/clients/:id/secret', async (c) => {
      await acceptNoBody(c);
      return jsonAnswer(c, { clientSecret: await rotateClientSecret(clients, operatorOf(c.get('requestContext')), clientId(c.req.param('id'))) });
    });
}

const client = z.object({
  clientId: z.string(),
  name: z.string(),
  public: z.boolean(),
  firstParty: z.boolean(),
  redirectUris: z.array(z.string()),
  postLogoutRedirectUris: z.array(z.string()),
  grantTypes: z.array(z.enum(GRANT_NAMES)),
  scopes: z.array(z.string()),
  backchannelLogoutUri: z.string().nullable(),
  idTokenSignedResponseAlg: z.enum(ID_TOKEN_ALGS),
  createdAt: z.string(),
  updatedAt: z.string(),
});
const secretAnswer = z.string().describe('shown once, never again: only its SHA-256 is kept');

const doc = (route: Omit<RouteDoc, 'tag' | 'auth'>): RouteDoc => ({ tag: 'OpenID Connect clients', auth: 'admin-key', ...route });

/** Mounted under /api/admin only while ADMIN_API_KEY is set. */
export const clientRouteDocs: RouteDoc[] = [
  doc({
    method: 'get',
    path: '/clients',
    summary: 'The registered OpenID Connect clients',
    answers: [{ status: 200, description: 'Every client, oldest first; never a secret.', json: z.object({ clients: z.array(client) }) }],
  }),
  doc({
    method: 'post',
    path: '/clients',
    summary: "Register a client; a confidential client's secret is in this answer only",
    body: createClientBody,
    answers: [
      {
        status: 201,
        description: 'Registered, and audited (oidc_client_created). clientSecret only for a confidential client.',
        json: z.object({ client, clientSecret: secretAnswer.optional() }),
      },
    ],
  }),
  doc({
    method: 'get',
    path: '/clients/:id',
    summary: 'One client',
    params: clientIdParam,
    answers: [{ status: 200, description: 'The client.', json: z.object({ client }) }],
    errors: ['not_found'],
  }),
  doc({
    method: 'patch',
    path: '/clients/:id',
    summary: 'Change its name, redirect URIs, grants, scopes or logout URIs',
    params: clientIdParam,
    body: updateClientBody,
    answers: [{ status: 200, description: 'Changed, and audited (oidc_client_updated).', json: z.object({ client }) }],
    errors: ['not_found'],
  }),
  doc({
    method: 'delete',
    path: '/clients/:id',
    summary: 'Delete the client with every grant and token it holds',
    params: clientIdParam,
    body: 'none',
    answers: [{ status: 200, description: 'Deleted, and audited (oidc_client_deleted).', json: z.object({ deleted: z.literal(true) }) }],
    errors: ['not_found'],
  }),
  doc({
    method: 'post',
    path: '/clients/:id/secret',
    summary: "Rotate a confidential client's secret: the old one stops working at once",
    params: clientIdParam,
    body: 'none',
    answers: [
      { status: 200, description: 'The new secret (shown once), audited (oidc_client_secret_rotated).', json: z.object({ clientSecret: secretAnswer }) },
    ],
    errors: ['not_found'],
  }),
];
