/**
 * @module How a feature describes its routes for the OpenAPI document (http/openapi.ts): each
 * `src/<feature>/routes.ts` exports a list of RouteDoc next to its schemas, and the request
 * schemas in it are the very constants its handlers validate with (`readJsonBody(c, body)`), so
 * the document cannot drift from what the routes accept. Answers are described by zod schemas
 * too (documentation only: the handlers build them). test/openapi.test.ts checks that every route
 * of the app has its RouteDoc and the reverse, and that each documented body schema is the one
 * the route validates with.
 *
 * Adding a route: one entry in the same file's list, for example
 *
 * @example
 * export const widgetRouteDocs: RouteDoc[] = [
 *   {
 *     method: 'post', path: '/widgets', tag: 'Widgets', summary: 'Create a widget', auth: 'session',
 *     body: widgetBody,
 *     answers: [{ status: 201, description: 'Created', json: z.object({ id: z.string() }) }],
 *     errors: ['email_not_verified', 'rate_limited'],
 *   },
 * ];
 *
 * The builder adds what every route of a kind can answer: 400/413/415 to a route that reads a
 * body, 403 `forbidden_origin` to a state-changing one, 401 `not_authenticated` behind a session,
 * 500 everywhere and 503 `service_unavailable` under /api.
 */
import { z } from 'zod';
import type { ErrorCode, ErrorStatus } from '../errors.js';

export type RouteMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteAnswerDoc {
  status: number;
  description: string;
  /** A JSON body of this shape. */
  json?: z.ZodType;
  /** Another media type (a page, a script, Prometheus text), when not JSON. */
  mediaType?: string;
  /** Headers worth naming: Location of a redirect, Set-Cookie of a sign-in, Retry-After. */
  headers?: Readonly<Record<string, string>>;
}

export interface RouteDoc {
  method: RouteMethod;
  /** The pattern as the routes file registers it, relative to where app.ts mounts the file. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** What the caller presents: the session cookie, the second-factor challenge cookie, METRICS_TOKEN or ADMIN_API_KEY. */
  auth?: 'session' | 'challenge' | 'metrics-token' | 'admin-key';
  /** The schema the handler passes to readJsonBody; `none`: acceptNoBody (no body, or any JSON, ignored). */
  body?: z.ZodType | 'none';
  /** The query parameters the handler reads (an object of optional strings, usually). */
  query?: z.ZodObject;
  /** The path parameters, when they have a form (a UUID, a provider id); others are plain strings. */
  params?: z.ZodObject;
  answers: readonly RouteAnswerDoc[];
  /** The error codes this route answers, at their usual status (errors.ts ERROR_STATUS) or at the one given. */
  errors?: readonly (ErrorCode | readonly [ErrorCode, ErrorStatus])[];
}

/** A routes file's docs and where app.ts mounts it. */
export interface RouteDocGroup {
  prefix: string;
  docs: readonly RouteDoc[];
}

/** Answers many routes share. */
export const okAnswer = z.object({ ok: z.literal(true) });
export const messageAnswer = z.object({ message: z.string() });
/** The second step a 2FA account gets instead of a session (with the challenge cookie). */
export const mfaRequiredAnswer = z.object({ ok: z.literal(true), mfaRequired: z.literal(true), methods: z.array(z.enum(['totp', 'recovery_code'])) });
