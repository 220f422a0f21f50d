/**
 * @module Reads a JSON request body and validates it with zod, turning every way it can be wrong
 * into the JSON error shape: 415 not JSON, 400 malformed JSON, 400 validation_error with issues.
 * (413 for an over-long body is the bodyLimit middleware's job, before this runs.)
 */
import type { Context } from 'hono';
import type { z } from 'zod';
import { AppError, validationError, type ValidationIssue } from '../errors.js';

export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase();
  return mediaType === 'application/json';
}

export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
}

export async function readJsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  if (!isJsonContentType(c.req.header('content-type'))) {
    throw new AppError('unsupported_media_type', 415, 'Send the request body as JSON with Content-Type: application/json.');
  }
  const text = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw validationError([{ path: '', message: 'is not valid JSON' }], 'The request body is not valid JSON.');
  }
  const result = schema.safeParse(body);
  if (!result.success) throw validationError(toValidationIssues(result.error));
  return result.data;
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
