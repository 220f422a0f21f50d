/**
 * @module The OpenAPI 3.1 document (DESIGN §9.6) at GET /api/openapi.json, generated from the
 * route docs each routes file exports next to its schemas (http/route-docs.ts): request bodies
 * are `z.toJSONSchema` of the very schemas the handlers validate with, answers of the zod shapes
 * the docs give, errors of errors.ts (the JSON error shape is one shared component). Built on the
 * first request, then served from memory; nothing of it runs on any other request.
 */
import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { z } from 'zod';
import { ERROR_CODES, ERROR_STATUS, type ErrorCode } from '../errors.js';
import type { AppEnv } from './env.js';
import type { RouteDoc, RouteDocGroup } from './route-docs.js';

type JsonSchema = Record<string, unknown>;

/** Request schemas describe what a client sends (zod's input side: before trims and defaults). */
export function requestJsonSchema(schema: z.ZodType): JsonSchema {
  return jsonSchemaOf(schema, 'input');
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // OpenAPI 3.1 is JSON Schema 2020-12; `$schema` is left out, the document's dialect says it.
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** The error shape every failure answers with (DESIGN §4). */
const errorBody = z.object({
  error: z.enum(ERROR_CODES).describe('a stable code (docs/http-api.md, Errors)'),
  message: z.string().describe('for people; may change'),
  issues: z
    .array(z.object({ path: z.string(), message: z.string() }))
    .optional()
    .describe('validation_error: each field that is wrong'),
  requestId: z.string().optional().describe('500 and 503: quote it when reporting a problem'),
});

/** package.json's version and licence (an SPDX identifier): from src/http/ or dist/http/, two folders up. */
function packageInfo(): { version: string; license: string | null } {
  const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: unknown; license?: unknown };
  return {
    version: typeof manifest.version === 'string' ? manifest.version : '0.0.0',
    license: typeof manifest.license === 'string' ? manifest.license : null,
  };
}

/**
 * Whether a client must send a body: a POST without one is read as `{}` (http/json-body.ts), so
 * the body is required exactly when the schema refuses `{}` (a required field).
 */
function bodyRequired(schema: z.ZodType): boolean {
  return !schema.safeParse({}).success;
}

/** Hono's `/sessions/:id` is OpenAPI's `/sessions/{id}`. */
export function openApiPath(honoPath: string): string {
  return honoPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

export interface OpenApiSettings {
  baseUrl: string;
  sessionCookieName: string;
  challengeCookieName: string;
}

export function buildOpenApiDocument(groups: readonly RouteDocGroup[], settings: OpenApiSettings): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const { prefix, docs } of groups) {
    for (const doc of docs) {
      const fullPath = prefix + (doc.path === '/' && prefix !== '' ? '' : doc.path);
      const key = openApiPath(fullPath);
      const item = (paths[key] ??= {});
      if (item[doc.method] !== undefined) throw new Error(`two route docs for ${doc.method.toUpperCase()} ${fullPath}`);
      item[doc.method] = operation(doc, fullPath);
      tags.add(doc.tag);
    }
  }
  const { version, license } = packageInfo();
  return {
    openapi: '3.1.0',
    info: {
      title: 'Gatehouse',
      version,
      ...(license === null ? {} : { license: { name: license, identifier: license } }),
      description:
        'Self-hosted authentication: accounts, sessions, two-factor sign-in, sign-in by email and with providers. Every error is JSON `{ error, message }` (components.schemas.Error). Generated from the schemas that validate the requests.',
    },
    servers: [{ url: settings.baseUrl }],
    tags: [...tags].map((name) => ({ name })),
    paths,
    components: {
      schemas: { Error: jsonSchemaOf(errorBody, 'output') },
      securitySchemes: {
        session: { type: 'apiKey', in: 'cookie', name: settings.sessionCookieName, description: 'The session cookie set by a sign-in.' },
        challenge: {
          type: 'apiKey',
          in: 'cookie',
          name: settings.challengeCookieName,
          description: 'The second-factor challenge cookie a 2FA sign-in gets instead of a session (5 minutes).',
        },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, when it is set.' },
        adminKey: { type: 'http', scheme: 'bearer', description: 'ADMIN_API_KEY; while it is unset every /api/admin/* answers 404.' },
      },
    },
  };
}

function operation(doc: RouteDoc, fullPath: string): Record<string, unknown> {
  const op: Record<string, unknown> = {
    tags: [doc.tag],
    summary: doc.summary,
    operationId: `${doc.method}${fullPath.replace(/[^A-Za-z0-9]+(.)?/g, (_, next: string | undefined) => (next ?? '').toUpperCase())}`,
  };
  if (doc.description !== undefined) op.description = doc.description;
  if (doc.auth === 'session') op.security = [{ session: [] }];
  if (doc.auth === 'challenge') op.security = [{ challenge: [] }];
  if (doc.auth === 'metrics-token') op.security = [{ metricsToken: [] }, {}];
  if (doc.auth === 'admin-key') op.security = [{ adminKey: [] }];

  const parameters: unknown[] = [];
  const pathNames = [...fullPath.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1] ?? '');
  const paramSchema = doc.params === undefined ? null : requestJsonSchema(doc.params);
  const paramProperties = (paramSchema?.properties ?? {}) as Record<string, JsonSchema>;
  for (const name of pathNames) {
    parameters.push({ name, in: 'path', required: true, schema: paramProperties[name] ?? { type: 'string' } });
  }
  if (doc.query !== undefined) {
    const querySchema = requestJsonSchema(doc.query);
    const required = new Set((querySchema.required ?? []) as string[]);
    for (const [name, schema] of Object.entries((querySchema.properties ?? {}) as Record<string, JsonSchema>)) {
      const { description, ...rest } = schema;
      parameters.push({ name, in: 'query', required: required.has(name), schema: rest, ...(description !== undefined ? { description } : {}) });
    }
  }
  if (parameters.length > 0) op.parameters = parameters;

  if (doc.body !== undefined && doc.body !== 'none') {
    op.requestBody = { required: bodyRequired(doc.body), content: { 'application/json': { schema: requestJsonSchema(doc.body) } } };
  } else if (doc.body === 'none') {
    op.requestBody = {
      required: false,
      description: 'No body is needed; a JSON body is accepted and ignored.',
      content: { 'application/json': { schema: {} } },
    };
  }

  const responses: Record<string, unknown> = {};
  for (const answer of doc.answers) {
    const response: Record<string, unknown> = { description: answer.description };
    if (answer.json !== undefined) response.content = { 'application/json': { schema: jsonSchemaOf(answer.json, 'output') } };
    else if (answer.mediaType !== undefined) response.content = { [answer.mediaType]: { schema: { type: 'string' } } };
    if (answer.headers !== undefined) {
      response.headers = Object.fromEntries(Object.entries(answer.headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));
    }
    responses[String(answer.status)] = response;
  }
  for (const [status, codes] of errorsByStatus(doc, fullPath)) {
    const existing = responses[String(status)];
    if (existing !== undefined) {
      (existing as { description: string }).description += ` Or the error ${codes.join(', ')}.`;
      continue;
    }
    responses[String(status)] = {
      description: `Error: ${codes.join(', ')}.`,
      ...(status === 429 ? { headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } } } : {}),
      content: {
        'application/json': {
          schema: { allOf: [{ $ref: '#/components/schemas/Error' }, { type: 'object', properties: { error: { enum: codes } } }] },
        },
      },
    };
  }
  op.responses = responses;
  return op;
}

/** The route's own errors, and those the edges add to every route of its kind (http/route-docs.ts). */
function errorsByStatus(doc: RouteDoc, fullPath: string): Map<number, ErrorCode[]> {
  const all: [ErrorCode, number][] = (doc.errors ?? []).map((entry) => (typeof entry === 'string' ? [entry, ERROR_STATUS[entry]] : [entry[0], entry[1]]));
  if (doc.body !== undefined) all.push(['validation_error', 400], ['payload_too_large', 413], ['unsupported_media_type', 415]);
  if (doc.method !== 'get') all.push(['forbidden_origin', 403]);
  if (doc.auth === 'session' || doc.auth === 'metrics-token') all.push(['not_authenticated', 401]);
  if (doc.auth === 'admin-key') all.push(['admin_unauthorized', 401], ['rate_limited', 429]);
  all.push(['internal_error', 500]);
  if (fullPath.startsWith('/api/')) all.push(['service_unavailable', 503]);
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, status] of all) {
    const codes = byStatus.get(status) ?? [];
    if (!codes.includes(code)) codes.push(code);
    byStatus.set(status, codes);
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

export const openApiRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/api/openapi.json',
    tag: 'Operations',
    summary: 'This document: OpenAPI 3.1, generated from the schemas that validate the requests',
    answers: [{ status: 200, description: 'The document.', json: z.object({ openapi: z.string() }).loose() }],
  },
];

/** GET /api/openapi.json, built on the first request from `groups()` (called then, not before). */
export function createOpenApiRoutes(deps: { groups: () => readonly RouteDocGroup[]; settings: OpenApiSettings }): Hono<AppEnv> {
  let text: string | null = null;
  return new Hono<AppEnv>().get('/api/openapi.json', (c) => {
    text ??= JSON.stringify(buildOpenApiDocument(deps.groups(), deps.settings));
    return c.body(text, 200, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache' });
  });
}
