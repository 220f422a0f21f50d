/**
 * @module User import and export over HTTP: `POST /api/admin/users/import` and `GET
 * /api/admin/users/export` (behind the admin API's key check; mounted before the admin API, whose
 * `/users/:id` would otherwise take `export` for an id), and `GET /api/auth/account/export` (the
 * signed-in person's own data).
 */
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { z } from 'zod';
import { AppError, validationError } from '../errors.js';
import { jsonAnswer, setAnswerHeader } from '../http/answer.js';
import type { AppEnv } from '../http/env.js';
import { notUtf8 } from '../http/json-body.js';
import type { RouteDoc } from '../http/route-docs.js';
import type { SessionCookieSettings } from '../session/cookie.js';
import type { SessionDeps } from '../session/flow.js';
import { requireSession } from '../session/read-session.js';
import { MAX_IMPORT_BODY_BYTES } from './body.js';
import { exportAccount, exportUsers, type AccountExportDeps } from './export.js';
import { ON_CONFLICT, importUsers, type ImportDeps, type LineResult, type OnConflict } from './import.js';

const booleanFlag = z.enum(['true', 'false']).optional();
const importQuery = z.object({ dryRun: booleanFlag, onConflict: z.enum(ON_CONFLICT as [OnConflict, ...OnConflict[]]).optional() });
const exportQuery = z.object({ includePasswordHashes: booleanFlag });

function parseQuery<T extends z.ZodObject>(schema: T, query: Record<string, string>): z.infer<T> {
  const parsed = schema.safeParse(query);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })));
}

function importTooLarge(): AppError {
  return new AppError(
    'payload_too_large',
    413,
    `The import body must be at most ${MAX_IMPORT_BODY_BYTES} bytes (10 MiB): split the file, or use gatehouse users import.`,
  );
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The NDJSON body, within MAX_IMPORT_BODY_BYTES (the Node server reads it itself; elsewhere app.ts bounds it). */
async function readNdjsonBody(c: Context<AppEnv>): Promise<string> {
  const mediaType = c.req.header('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== 'application/x-ndjson') {
    throw new AppError('unsupported_media_type', 415, 'Send the users as NDJSON (one JSON object a line) with Content-Type: application/x-ndjson.');
  }
  const readBody = c.env?.readBody;
  if (readBody !== undefined) {
    const text = await readBody(MAX_IMPORT_BODY_BYTES);
    if (text === null) throw importTooLarge();
    return text;
  }
  const bytes = await c.req.arrayBuffer();
  if (bytes.byteLength > MAX_IMPORT_BODY_BYTES) throw importTooLarge();
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw notUtf8();
  }
}

export interface AdminTransferRouteDeps {
  flow: ImportDeps;
  /** The admin API's key check (admin/routes.ts): these routes are mounted before its own. */
  requireAdminKey: MiddlewareHandler<AppEnv>;
}

export function createAdminTransferRoutes(deps: AdminTransferRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>()
    .use('/users/import', deps.requireAdminKey)
    .use('/users/export', deps.requireAdminKey)
    .post('/users/import', async (c) => {
      const query = parseQuery(importQuery, c.req.query());
      const text = await readNdjsonBody(c);
      const ctx = c.get('requestContext');
      const failed: Pick<LineResult, 'line' | 'error'>[] = [];
      const summary = await importUsers(
        deps.flow,
        text.split(/\r?\n/),
        { dryRun: query.dryRun === 'true', onConflict: query.onConflict ?? 'skip', now: ctx.now },
        { actor: 'admin', ip: ctx.ip, userAgent: ctx.userAgent },
        (result) => {
          if (result.status === 'failed') failed.push({ line: result.line, error: result.error });
        },
      );
      return jsonAnswer(c, { imported: summary.imported, updated: summary.updated, skipped: summary.skipped, failed, dryRun: query.dryRun === 'true' });
    })
    .get('/users/export', (c) => {
      const query = parseQuery(exportQuery, c.req.query());
      const lines = exportUsers(deps.flow.store, { includePasswordHashes: query.includePasswordHashes === 'true' });
      const encoder = new TextEncoder();
      // Streamed a page of users at a time: memory stays flat however many users there are.
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await lines.next();
          if (next.done === true) controller.close();
          else controller.enqueue(encoder.encode(next.value));
        },
        async cancel() {
          await lines.return(undefined);
        },
      });
      return new Response(body, { status: 200, headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-store' } });
    });
}

export interface AccountExportRouteDeps {
  flow: AccountExportDeps;
  session: SessionDeps;
  cookie: SessionCookieSettings;
}

export function createAccountExportRoutes(deps: AccountExportRouteDeps): Hono<AppEnv> {
  return new Hono<AppEnv>().get('/account/export', async (c) => {
    const signedIn = await requireSession(c, deps);
    const document = await exportAccount(deps.flow, signedIn.user, c.get('requestContext'));
    setAnswerHeader(c, 'Cache-Control', 'no-store');
    // A download, named: the account page's "Download my data" link saves it as a file.
    setAnswerHeader(c, 'Content-Disposition', 'attachment; filename="gatehouse-my-data.json"');
    return jsonAnswer(c, document);
  });
}

const importAnswer = z.object({
  imported: z.number().int().describe('users created'),
  updated: z.number().int().describe('users changed (onConflict=update)'),
  skipped: z.number().int().describe('users already there (onConflict=skip)'),
  failed: z.array(z.object({ line: z.number().int(), error: z.string() })).describe('refused lines, each with its number and reason; the others were imported'),
  dryRun: z.boolean(),
});

export const adminTransferRouteDocs: RouteDoc[] = [
  {
    method: 'post',
    path: '/users/import',
    tag: 'Admin',
    summary: 'Import users from NDJSON (one user a line, password hashes kept as they are)',
    description:
      'Body: `application/x-ndjson`, at most 10 MiB, one user a line: `{ email, emailVerified?, createdAt?, externalId?, disabled?, password?: { algorithm, hash, … }, providers?: [{ provider, providerUserId, login? }] }`. A refused line never stops the others. `dryRun=true` checks every line and writes nothing; `onConflict` (skip, update or fail; default skip) says what happens to a user already there, found by email, then external id. Audited as `users_imported`.',
    auth: 'admin-key',
    query: importQuery,
    answers: [{ status: 200, description: 'What was imported, and each refused line.', json: importAnswer }],
    errors: ['validation_error', 'payload_too_large', 'unsupported_media_type'],
  },
  {
    method: 'get',
    path: '/users/export',
    tag: 'Admin',
    summary: 'Export every user as NDJSON in the import format (streamed)',
    description:
      'One line per user, in the import format, so an export imports into another Gatehouse unchanged. Provider links come without tokens; password hashes only with `includePasswordHashes=true` (a Gatehouse hash under its own algorithm name, `gatehouse-v1`).',
    auth: 'admin-key',
    query: exportQuery,
    answers: [{ status: 200, description: 'The users, one JSON object a line.', mediaType: 'application/x-ndjson' }],
    errors: ['validation_error'],
  },
];

export const accountExportRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/account/export',
    tag: 'Account',
    summary: 'Download everything Gatehouse holds about you, as one JSON document',
    description:
      'The account, sessions, linked sign-ins, passkeys (names and dates), two-factor state, organizations (with the role) and your audit events; never a password hash, token or secret. Limited by RATE_LIMIT_ACCOUNT_EXPORT; audited as `account_exported`.',
    auth: 'session',
    answers: [
      {
        status: 200,
        description: 'The document (Content-Disposition: attachment).',
        json: z.object({
          exportedAt: z.string(),
          account: z
            .object({ id: z.string(), email: z.string().nullable(), emailVerified: z.boolean(), hasPassword: z.boolean(), createdAt: z.string() })
            .loose(),
          sessions: z.array(z.object({}).loose()),
          linkedSignIns: z.array(z.object({ provider: z.string(), login: z.string(), linkedAt: z.string() })),
          passkeys: z.array(z.object({ name: z.string(), createdAt: z.string(), lastUsedAt: z.string().nullable() })),
          twoFactor: z.object({ enabled: z.boolean(), enabledAt: z.string().nullable(), recoveryCodesLeft: z.number().int() }),
          organizations: z.array(z.object({ id: z.string(), name: z.string(), slug: z.string(), role: z.string(), joinedAt: z.string() })),
          auditEvents: z.array(z.object({}).loose()),
        }),
      },
    ],
    errors: ['not_authenticated', 'rate_limited'],
  },
];
