/**
 * @module The admin API (DESIGN §9.6): `/api/admin/*`, mounted only when ADMIN_API_KEY is set
 * (otherwise every path under it is the app's plain 404). Machine to machine:
 * `Authorization: Bearer <ADMIN_API_KEY>`, never a cookie.
 *
 * Every request is first counted against RATE_LIMIT_ADMIN per client IP, then its key compared in
 * constant time (HMACs of both under a per-process key, so neither the length nor the content of
 * the real key shows in the timing); a wrong or missing key is 401 `admin_unauthorized`.
 *
 * A browser on another site cannot use it: the key is a header its script would have to set,
 * which needs a CORS preflight that names `Authorization`, and our preflight allows only
 * `Content-Type` (and only for TRUSTED_ORIGINS); no cookie or other ambient credential is read,
 * so a cross-site form or link carries nothing that would authenticate it, and a state-changing
 * one is refused by origin anyway (http/cross-site.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Hono, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { jsonAnswer, setAnswerHeader } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { acceptNoBody } from '../http/json-body.js';
import type { RouteDoc } from '../http/route-docs.js';
import type { RateLimits } from '../limits/rate-limits.js';
import {
  deleteUser,
  disableUser,
  enableUser,
  findUserById,
  listAuditEvents,
  listIpLocks,
  listUsers,
  revokeUserSessions,
  showUser,
  unlockIp,
  unlockUser,
  type AdminDeps,
  type Operator,
} from './flow.js';
import { USER_ID, auditQuery, parseAuditQuery, parseIpAddress, parseUserListQuery, userListQuery } from './input.js';

export interface AdminRouteDeps {
  flow: AdminDeps;
  /** ADMIN_API_KEY (config.ts has checked its length). */
  apiKey: string;
  limits: RateLimits;
}

/** A bearer key longer than this is not ours: it is refused without hashing a megabyte. */
const MAX_KEY_CHARS = 1024;

function unauthorizedAdmin(): AppError {
  return new AppError('admin_unauthorized', 401, 'The admin API needs the header Authorization: Bearer <ADMIN_API_KEY>, with the right key.');
}

/**
 * The check every /api/admin route runs first: RATE_LIMIT_ADMIN, then the key. Also used by the
 * user import and export (user-transfer/routes.ts), which are mounted before these routes.
 */
export function adminKeyCheck(deps: Pick<AdminRouteDeps, 'apiKey' | 'limits'>): MiddlewareHandler<AppEnv> {
  const macKey = randomBytes(32);
  const digest = (text: string): Buffer => createHmac('sha256', macKey).update(text).digest();
  const expected = digest(deps.apiKey);

  return async (c, next) => {
    // Answers here are for one operator's tool: never stored by a cache on the way.
    setAnswerHeader(c, 'Cache-Control', 'no-store');
    const ctx = c.get('requestContext');
    // Before the key: a flood of wrong keys costs one counter each, then 429 (Retry-After).
    await deps.limits.consume('admin', { ip: ctx.ip }, ctx.now);
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer +(\S+) *$/i.exec(header);
    const presented = match?.[1];
    if (presented === undefined || presented.length > MAX_KEY_CHARS || !timingSafeEqual(digest(presented), expected)) {
      setAnswerHeader(c, 'WWW-Authenticate', 'Bearer realm="gatehouse-admin"');
      throw unauthorizedAdmin();
    }
    await next();
  };
}

export function createAdminRoutes(deps: AdminRouteDeps): Hono<AppEnv> {
  const requireAdminKey = adminKeyCheck(deps);

  const operatorOf = (ctx: { ip: string; userAgent: string | null; now: Date }): Operator => ({
    actor: 'admin',
    ip: ctx.ip,
    userAgent: ctx.userAgent,
    now: ctx.now,
  });

  return new Hono<AppEnv>()
    .use('*', requireAdminKey)
    .get('/users', async (c) => jsonAnswer(c, await listUsers(deps.flow, parseUserListQuery(c.req.query()))))
    .get('/users/:id', async (c) => {
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, { user: await showUser(deps.flow, user, c.get('requestContext').now) });
    })
    .post('/users/:id/disable', async (c) => {
      await acceptNoBody(c);
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, await disableUser(deps.flow, user, operatorOf(c.get('requestContext'))));
    })
    .post('/users/:id/enable', async (c) => {
      await acceptNoBody(c);
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, await enableUser(deps.flow, user, operatorOf(c.get('requestContext'))));
    })
    .post('/users/:id/revoke-sessions', async (c) => {
      await acceptNoBody(c);
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, await revokeUserSessions(deps.flow, user, operatorOf(c.get('requestContext'))));
    })
    .post('/users/:id/unlock', async (c) => {
      await acceptNoBody(c);
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, await unlockUser(deps.flow, user, operatorOf(c.get('requestContext'))));
    })
    .delete('/users/:id', async (c) => {
      await acceptNoBody(c);
      const user = await findUserById(deps.flow, c.req.param('id'));
      return jsonAnswer(c, await deleteUser(deps.flow, user, operatorOf(c.get('requestContext'))));
    })
    .get('/ip-locks', async (c) => jsonAnswer(c, await listIpLocks(deps.flow, c.get('requestContext').now)))
    .post('/ip-locks/:ip/unlock', async (c) => {
      await acceptNoBody(c);
      const ip = parseIpAddress(c.req.param('ip'));
      return jsonAnswer(c, await unlockIp(deps.flow, ip, operatorOf(c.get('requestContext'))));
    })
    .get('/audit', async (c) => jsonAnswer(c, await listAuditEvents(deps.flow, parseAuditQuery(c.req.query()))));
}

const adminUser = z.object({
  id: z.string(),
  email: z.string().nullable(),
  emailVerified: z.boolean(),
  hasPassword: z.boolean(),
  createdAt: z.string(),
  lastLoginAt: z.string().nullable(),
  disabledAt: z.string().nullable(),
});
const adminUserDetails = adminUser.extend({
  sessions: z.number().int(),
  providers: z.array(z.object({ provider: z.string(), login: z.string(), linkedAt: z.string() })),
  twoFactor: z.object({ enabled: z.boolean(), recoveryCodesLeft: z.number().int() }),
  passkeys: z.number().int(),
  lockedForSeconds: z.number().int().nullable(),
});
const auditEvent = z.object({
  id: z.number().int(),
  type: z.string(),
  userId: z.string().nullable(),
  ip: z.string().nullable(),
  userAgent: z.string().nullable(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  at: z.string(),
});
const userIdParam = z.object({ id: z.string().regex(USER_ID).describe('a user id (UUID)') });
const userAction = (path: string, summary: string, json: z.ZodType, method: 'post' | 'delete' = 'post'): RouteDoc => ({
  method,
  path,
  tag: 'Admin',
  summary,
  auth: 'admin-key',
  body: 'none',
  params: userIdParam,
  answers: [{ status: 200, description: 'Done, and audited with actor admin.', json }],
  errors: ['not_found'],
});

/** Mounted under /api/admin only while ADMIN_API_KEY is set. */
export const adminRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/users',
    tag: 'Admin',
    summary: 'Search users by email or id, a page at a time (oldest first)',
    auth: 'admin-key',
    query: userListQuery,
    answers: [{ status: 200, description: 'A page of users.', json: z.object({ users: z.array(adminUser), nextCursor: z.string().nullable() }) }],
    // The query is validated (http/openapi.ts adds validation_error only for bodies).
    errors: ['validation_error'],
  },
  {
    method: 'get',
    path: '/users/:id',
    tag: 'Admin',
    summary: 'One user: sessions, linked providers, two-factor, passkeys, login lock',
    auth: 'admin-key',
    params: userIdParam,
    answers: [{ status: 200, description: 'The user.', json: z.object({ user: adminUserDetails }) }],
    errors: ['not_found'],
  },
  userAction(
    '/users/:id/disable',
    'Disable the account: no sign-in by any method; its sessions are revoked',
    z.object({ user: adminUser, sessionsRevoked: z.number().int() }),
  ),
  userAction('/users/:id/enable', 'Enable a disabled account', z.object({ user: adminUser })),
  userAction('/users/:id/revoke-sessions', 'End every session of the user', z.object({ sessionsRevoked: z.number().int() })),
  userAction('/users/:id/unlock', "Lift the login lock of the user's email (or id)", z.object({ wasLocked: z.boolean() })),
  {
    ...userAction('/users/:id', 'Delete the account (its audit rows stay, without the address)', z.object({ deleted: z.literal(true) }), 'delete'),
    // The only owner of an organization with other members: someone else must be made an owner first.
    errors: ['not_found', 'last_owner'],
  },
  {
    method: 'get',
    path: '/ip-locks',
    tag: 'Admin',
    summary: 'The client addresses under a login lock now, longest lock first (at most 1000)',
    auth: 'admin-key',
    answers: [
      {
        status: 200,
        description: 'The locked addresses.',
        json: z.object({ locks: z.array(z.object({ ip: z.string(), secondsLeft: z.number().int().describe('until the lock ends by itself') })) }),
      },
    ],
  },
  {
    method: 'post',
    path: '/ip-locks/:ip/unlock',
    tag: 'Admin',
    summary: 'Lift the login lock of a client address and forget its failures',
    auth: 'admin-key',
    body: 'none',
    params: z.object({ ip: z.string().describe('an IPv4 or IPv6 address (IPv6 URL-encoded)') }),
    answers: [{ status: 200, description: 'Done, and audited (admin_ip_unlocked) with actor admin.', json: z.object({ wasLocked: z.boolean() }) }],
    errors: ['validation_error'],
  },
  {
    method: 'get',
    path: '/audit',
    tag: 'Admin',
    summary: 'The audit trail, newest first, filtered by user, type and time, a page at a time',
    auth: 'admin-key',
    query: auditQuery,
    answers: [{ status: 200, description: 'A page of events.', json: z.object({ events: z.array(auditEvent), nextCursor: z.string().nullable() }) }],
    errors: ['validation_error'],
  },
];
