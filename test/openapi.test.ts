import { randomUUID } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { z } from 'zod';
import { ROUTE_DOC_GROUPS } from '../src/app.js';
import { ERROR_CODES } from '../src/errors.js';
import { appOfGatehouse } from '../src/gatehouse.js';
import { bodySchemaObserver } from '../src/http/json-body.js';
import { openApiPath, requestJsonSchema } from '../src/http/openapi.js';
import { routePatternOf } from '../src/metrics/http.js';
import { STRONG_PASSWORD, cookieFrom, createTestGatehouse, type TestGatehouse } from './support/harness.js';

type Operation = {
  requestBody?: { content: { 'application/json': { schema: unknown } } };
  responses: Record<string, { content?: Record<string, { schema: { allOf?: [unknown, { properties: { error: { enum: string[] } } }] } }> }>;
  parameters?: { name: string; in: string }[];
};
type Document = { openapi: string; paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, unknown> } };

const ADMIN_KEY = 'k'.repeat(40);

/** Every documented route, flattened: the full Hono pattern and its doc. */
const documented = ROUTE_DOC_GROUPS.flatMap(({ prefix, docs }) => docs.map((doc) => ({ fullPath: prefix + doc.path, doc })));

describe('GET /api/openapi.json (DESIGN §9.6)', () => {
  let t: TestGatehouse;
  let document: Document;
  beforeAll(async () => {
    // The admin API is mounted only with a key: set, so the document is held against its routes too.
    t = await createTestGatehouse('sqlite', { env: { RATE_LIMIT_REGISTER: '100/15m', ADMIN_API_KEY: ADMIN_KEY } });
    const response = await t.request('GET', '/api/openapi.json');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    document = (await response.json()) as Document;
  });
  afterAll(async () => {
    await t.close();
  });

  test('is a valid OpenAPI 3.1 document', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  test('names every route of the app, and no route the app lacks', () => {
    const app = appOfGatehouse.get(t.gatehouse)!;
    // Middlewares (app.use) are registered for every method; routes have one.
    const inApp = new Set(app.routes.filter((route) => route.method !== 'ALL').map((route) => `${route.method} ${openApiPath(route.path)}`));
    const inDocument = new Set(Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`)));
    expect([...inApp].filter((route) => !inDocument.has(route)).sort()).toEqual([]);
    expect([...inDocument].filter((route) => !inApp.has(route)).sort()).toEqual([]);
    expect(inApp.size).toBeGreaterThan(45);
  });

  test('each request body in the document is the JSON Schema of the schema the route validates with', () => {
    const withBody = documented.filter(({ doc }) => doc.body !== undefined && doc.body !== 'none');
    expect(withBody.length).toBeGreaterThanOrEqual(17);
    for (const { fullPath, doc } of withBody) {
      const operation = document.paths[openApiPath(fullPath)]?.[doc.method];
      const schema = operation?.requestBody?.content['application/json'].schema;
      expect(schema, `${doc.method} ${fullPath}`).toEqual(requestJsonSchema(doc.body as z.ZodType));
      const { $schema: _dialect, ...direct } = z.toJSONSchema(doc.body as z.ZodType, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
      expect(schema).toEqual(direct);
    }
    expect(document.paths['/api/auth/register']?.post?.requestBody?.content['application/json'].schema).toMatchObject({
      type: 'object',
      properties: { email: { type: 'string' }, password: { type: 'string' } },
      required: ['email', 'password'],
    });
  });

  test('and the routes validate with exactly those schema objects (observed in readJsonBody)', async () => {
    const cookie = cookieFrom(
      await t.request('POST', '/api/auth/register', { json: { email: 'ana@example.com', password: STRONG_PASSWORD } }),
      'gatehouse_session',
    )!;
    const seen = new Map<string, z.ZodType | null>();
    bodySchemaObserver.current = (c, schema) => void seen.set(`${c.req.method} ${routePatternOf(c)}`, schema);
    try {
      // Logout last: it ends the session the others need.
      const readingBodies = documented
        .filter((entry) => entry.doc.body !== undefined)
        .sort((a, b) => Number(a.fullPath.endsWith('/logout')) - Number(b.fullPath.endsWith('/logout')));
      for (const { fullPath, doc } of readingBodies) {
        const path = fullPath.replace(':id', randomUUID()).replace(':provider', 'github');
        // A JSON array is no route's body: refused 400 before any work, whatever the route.
        const adminKey: Record<string, string> = fullPath.startsWith('/api/admin/') ? { authorization: `Bearer ${ADMIN_KEY}` } : {};
        const response = await t.request(doc.method.toUpperCase(), path, { body: '[]', headers: { 'content-type': 'application/json', ...adminKey }, cookie });
        const key = `${doc.method.toUpperCase()} ${fullPath}`;
        expect(seen.has(key), `${key} read no body (answered ${response.status})`).toBe(true);
        if (doc.body === 'none') expect(seen.get(key), key).toBeNull();
        else expect(seen.get(key) === doc.body, `${key} validates with another schema than the documented one`).toBe(true);
      }
      // No undocumented route reads a body: every route seen is documented with one.
      const documentedKeys = new Set(
        documented.filter((entry) => entry.doc.body !== undefined).map((entry) => `${entry.doc.method.toUpperCase()} ${entry.fullPath}`),
      );
      for (const key of seen.keys()) expect(documentedKeys.has(key), key).toBe(true);
    } finally {
      bodySchemaObserver.current = null;
    }
  });

  test('answers and errors: success shapes, path parameters, and only codes of ERROR_CODES with the shared Error schema', () => {
    expect(document.components.schemas.Error).toMatchObject({ type: 'object', required: ['error', 'message'] });
    let errorAnswers = 0;
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const statuses = Object.keys(operation.responses);
        // A page's POST (the form sent without its script) answers only 400 with an HTML page.
        const pagePost = method === 'post' && operation.responses['400']?.content?.['text/html'] !== undefined;
        expect(pagePost || statuses.some((status) => /^[23]/.test(status)), `${method} ${path} has no success answer`).toBe(true);
        for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1])) {
          expect(operation.parameters?.some((parameter) => parameter.in === 'path' && parameter.name === name)).toBe(true);
        }
        for (const status of statuses.filter((s) => /^[45]/.test(s))) {
          const schema = operation.responses[status]?.content?.['application/json']?.schema;
          if (schema?.allOf === undefined) continue; // an answer of the route's own shape (/readyz's 503, a page's 400)
          errorAnswers += 1;
          expect(schema.allOf[0]).toEqual({ $ref: '#/components/schemas/Error' });
          for (const code of schema.allOf[1].properties.error.enum) expect(ERROR_CODES).toContain(code);
        }
      }
    }
    expect(errorAnswers).toBeGreaterThan(100);
    const login = document.paths['/api/auth/login']!.post!;
    expect([...(login.responses['429']?.content?.['application/json']?.schema.allOf?.[1].properties.error.enum ?? [])].sort()).toEqual([
      'account_locked',
      'rate_limited',
    ]);
    expect(login.responses['401']?.content?.['application/json']?.schema.allOf?.[1].properties.error.enum).toEqual(['invalid_credentials']);
    // Routes that validate a query, not a body, document its 400 too; /metrics its limit.
    const errorCodes = (path: string, status: string): unknown =>
      document.paths[path]!.get!.responses[status]?.content?.['application/json']?.schema.allOf?.[1].properties.error.enum;
    expect(errorCodes('/api/admin/users', '400')).toEqual(['validation_error']);
    expect(errorCodes('/api/admin/audit', '400')).toEqual(['validation_error']);
    expect(errorCodes('/metrics', '429')).toEqual(['rate_limited']);
    const deleteSession = document.paths['/api/auth/sessions/{id}']!.delete!;
    expect(deleteSession.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: expect.objectContaining({ type: 'string', pattern: expect.any(String) }) },
    ]);
  });

  test('a request body is required where the route refuses a request without one; password bounds, email format and the licence are given', async () => {
    type Body = { required: boolean; content: { 'application/json': { schema: { properties?: Record<string, Record<string, unknown>> } } } };
    const bodyOf = (path: string, method = 'post'): Body => document.paths[path]![method]!.requestBody as unknown as Body;
    for (const path of [
      '/api/auth/register',
      '/api/auth/login',
      '/api/auth/password-reset/request',
      '/api/auth/password-reset/confirm',
      '/api/auth/2fa/verify',
    ]) {
      expect(bodyOf(path).required, path).toBe(true);
    }
    // Every field optional, or no body taken at all: a client may leave the body out.
    expect(bodyOf('/api/auth/passkeys/register/options').required).toBe(false);
    expect(bodyOf('/api/auth/logout').required).toBe(false);
    // What the document says is what the route does: without a body, register names its fields…
    const bare = await t.request('POST', '/api/auth/register');
    expect(bare.status).toBe(400);
    expect(await bare.json()).toMatchObject({ error: 'validation_error', issues: [{ path: 'email' }, { path: 'password' }] });
    // …and so does every route the document says needs one (those behind a session or a
    // challenge cookie refuse the missing cookie first, which says nothing of the body).
    let checked = 0;
    for (const { fullPath, doc } of documented) {
      const requestBody = document.paths[openApiPath(fullPath)]?.[doc.method]?.requestBody as unknown as Body | undefined;
      if (requestBody?.required !== true || doc.auth !== undefined || fullPath.includes(':')) continue;
      const answer = await t.request(doc.method.toUpperCase(), fullPath);
      expect([fullPath, answer.status], fullPath).toEqual([fullPath, 400]);
      expect(((await answer.json()) as { error: string }).error, fullPath).toBe('validation_error');
      checked += 1;
    }
    expect(checked).toBeGreaterThanOrEqual(8);

    const register = bodyOf('/api/auth/register').content['application/json'].schema.properties!;
    expect(register.password).toMatchObject({ type: 'string', minLength: 8, maxLength: 128 });
    expect(register.email).toMatchObject({ type: 'string', format: 'email', maxLength: 254 });
    expect(bodyOf('/api/auth/password-reset/confirm').content['application/json'].schema.properties!.password).toMatchObject({ minLength: 8, maxLength: 128 });
    expect(bodyOf('/api/auth/email/change').content['application/json'].schema.properties!.newEmail).toMatchObject({ format: 'email' });
    expect((document as unknown as { info: { license: unknown } }).info.license).toEqual({ name: 'MIT', identifier: 'MIT' });
  });

  test('is built once and served from memory', async () => {
    const again = await t.request('GET', '/api/openapi.json');
    expect(await again.json()).toEqual(document);
  });
});
