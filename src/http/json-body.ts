/**
 * @module Reads a JSON request body and validates it with zod, turning every way it can be wrong
 * into the JSON error shape: 415 a body that is not JSON, 400 malformed JSON (and a body that is
 * not UTF-8, or gives one key twice in an object), 400 validation_error with issues. A request without a body needs no Content-Type (DESIGN §9.1).
 * An over-long body is 413: here when the host reads the body (ConnectionInfo.readBody), else in
 * the bodyLimit middleware (app.ts), before this runs.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError, validationError, type ValidationIssue } from '../errors.js';
import { findDuplicateKey } from './duplicate-keys.js';
import type { AppEnv } from './env.js';

export const MAX_BODY_BYTES = 16 * 1024;

export function payloadTooLarge(): AppError {
  return new AppError('payload_too_large', 413, `The request body must be at most ${MAX_BODY_BYTES} bytes.`);
}

export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

type SchemaIssue = {
  readonly message: string;
  readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined;
  /** zod's issue code, beside the Standard Schema fields. */
  readonly code?: string;
};

/** zod says a missing field is "Invalid input: expected string, received undefined"; a person reads "is required". */
function issueMessage(issue: SchemaIssue): string {
  return issue.code === 'invalid_type' && / received undefined$/.test(issue.message) ? 'is required' : issue.message;
}

export function toValidationIssues(issues: readonly SchemaIssue[]): ValidationIssue[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.'),
    message: issueMessage(issue),
  }));
}

/** JSON is UTF-8 (RFC 8259); a body that is not is refused rather than read with replacement characters. */
export function notUtf8(): AppError {
  return validationError([{ path: '', message: 'is not valid UTF-8' }], 'The request body is not valid UTF-8.');
}

/** Throws on bytes that are not UTF-8; a leading byte-order mark is dropped, as Request.text() drops it. */
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

async function readBodyText(c: Context<AppEnv>): Promise<string> {
  const readBody = c.env?.readBody;
  if (readBody === undefined) {
    const bytes = await c.req.arrayBuffer();
    try {
      return strictUtf8.decode(bytes);
    } catch {
      throw notUtf8();
    }
  }
  const text = await readBody(MAX_BODY_BYTES);
  if (text === null) throw payloadTooLarge();
  return text;
}

function unsupportedMediaType(): AppError {
  return new AppError('unsupported_media_type', 415, 'Send the request body as JSON with Content-Type: application/json.');
}

/**
 * For the project's tests only: told of the schema each request body is validated with (null:
 * a route that takes no body). test/openapi.test.ts uses it to prove that the OpenAPI document's
 * request schemas are the very objects the routes validate with. Null (one check) otherwise.
 */
export const bodySchemaObserver: { current: ((c: Context<AppEnv>, schema: z.ZodType | null) => void) | null } = { current: null };

/**
 * The request's JSON body, validated by `schema`. A POST without a body needs no Content-Type
 * (DESIGN §9.1) and is validated as `{}`, so a missing body is answered field by field; a body in
 * any other type than JSON is 415. Cross-site forms are refused before this, by origin
 * (http/cross-site.ts).
 */
export async function readJsonBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  bodySchemaObserver.current?.(c, schema);
  return validateJsonValue(schema, await readJsonValue(c));
}

/**
 * A body's text read, parsed and validated as `readJsonBody` does, throwing the same errors: for
 * the Node shell's fast paths, which read the body themselves (password-sign-in/fast-path.ts).
 */
export function parseJsonBody<S extends z.ZodType>(schema: S, text: string, contentType: string | undefined): z.output<S> {
  return validateJsonValue(schema, parseJsonText(text, contentType));
}

function validateJsonValue<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  // Through the schema's Standard Schema face, which reports issues without building a ZodError
  // (an Error, with a stack trace): a refused body is an answer, not a fault (errors.ts).
  const result = schema['~standard'].validate(body === undefined ? {} : body);
  if (result instanceof Promise) throw new Error('request body schemas must be synchronous');
  if (result.issues !== undefined) throw validationError(toValidationIssues(result.issues));
  return result.value;
}

/**
 * For endpoints that take no body (logout, resend-verification): nothing is needed, not even a
 * Content-Type. A body is tolerated only when it is JSON (clients that send `{}`), and ignored.
 */
export async function acceptNoBody(c: Context<AppEnv>): Promise<void> {
  bodySchemaObserver.current?.(c, null);
  await readJsonValue(c);
}

/** The parsed JSON body; undefined when the request has none. */
async function readJsonValue(c: Context<AppEnv>): Promise<unknown> {
  return parseJsonText(await readBodyText(c), c.req.header('content-type'));
}

function parseJsonText(text: string, contentType: string | undefined): unknown {
  if (text === '') return undefined;
  if (!isJsonContentType(contentType)) throw unsupportedMediaType();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw validationError([{ path: '', message: 'is not valid JSON' }], 'The request body is not valid JSON.');
  }
  const repeated = findDuplicateKey(text);
  if (repeated !== null) {
    const path = repeated.join('.');
    throw validationError(
      [{ path: path.length > 200 ? `${path.slice(0, 200)}…` : path, message: 'is given more than once' }],
      'The request body gives a key more than once.',
    );
  }
  return value;
}
