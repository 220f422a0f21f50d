/**
 * @module Reads a JSON request body and validates it with zod, turning every way it can be wrong
 * into the JSON error shape: 415 not JSON, 400 malformed JSON, 400 validation_error with issues.
 * An over-long body is 413: here when the host reads the body (ConnectionInfo.readBody), else in
 * the bodyLimit middleware (app.ts), before this runs.
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError, validationError, type ValidationIssue } from '../errors.js';
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

type SchemaIssue = { readonly message: string; readonly path?: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined };

export function toValidationIssues(issues: readonly SchemaIssue[]): ValidationIssue[] {
  return issues.map((issue) => ({
    path: (issue.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.'),
    message: issue.message,
  }));
}

async function readBodyText(c: Context<AppEnv>): Promise<string> {
  const readBody = c.env?.readBody;
  if (readBody === undefined) return c.req.text();
  const text = await readBody(MAX_BODY_BYTES);
  if (text === null) throw payloadTooLarge();
  return text;
}

export async function readJsonBody<S extends z.ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  if (!isJsonContentType(c.req.header('content-type'))) {
    throw new AppError('unsupported_media_type', 415, 'Send the request body as JSON with Content-Type: application/json.');
  }
  const text = await readBodyText(c);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw validationError([{ path: '', message: 'is not valid JSON' }], 'The request body is not valid JSON.');
  }
  // Through the schema's Standard Schema face, which reports issues without building a ZodError
  // (an Error, with a stack trace): a refused body is an answer, not a fault (errors.ts).
  const result = schema['~standard'].validate(body);
  if (result instanceof Promise) throw new Error('request body schemas must be synchronous');
  if (result.issues !== undefined) throw validationError(toValidationIssues(result.issues));
  return result.value as z.output<S>;
}

/**
 * For endpoints that take no body (logout, resend-verification): the request must still say
 * `Content-Type: application/json` (an empty body or `{}` is fine). A cross-site HTML form can
 * only send form or text types, and a script on another origin sending JSON must pass a CORS
 * preflight that Gatehouse never grants — so no other site can trigger these (DESIGN §4: a POST
 * without JSON gets 415).
 */
export function assertJsonRequest(c: Context): void {
  if (!isJsonContentType(c.req.header('content-type'))) {
    throw new AppError('unsupported_media_type', 415, 'Send this request with Content-Type: application/json (the body may be empty).');
  }
}
