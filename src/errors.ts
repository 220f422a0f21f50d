/**
 * @module The one error type that reaches clients: a stable code, an HTTP status and a message.
 * Codes are a public contract (DESIGN §4): never rename one.
 */

export const ERROR_CODES = [
  'validation_error',
  'invalid_credentials',
  'email_exists',
  'invalid_token',
  'not_authenticated',
  'not_found',
  'method_not_allowed',
  'rate_limited',
  'account_locked',
  'unsupported_media_type',
  'payload_too_large',
  'service_unavailable',
  'internal_error',
  'provider_not_configured',
  'forbidden_origin',
  'reauthentication_required',
  'password_not_set',
  'last_sign_in_method',
  'invalid_code',
  'mfa_already_enabled',
  'mfa_not_enabled',
  'email_not_verified',
  'provider_unavailable',
  'passkey_invalid',
  'passkey_challenge_invalid',
  'account_disabled',
  'admin_unauthorized',
  'malformed_request',
  'passkey_limit_reached',
  'invalid_webhook_url',
  'webhook_limit_reached',
  'webhook_disabled',
  'already_delivered',
  'forbidden',
  'slug_taken',
  'last_owner',
  'invitation_email_mismatch',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export type ErrorStatus = 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 503;

/**
 * The status each code is usually answered with, for the OpenAPI document (http/openapi.ts); a
 * route's description names another where it differs (`invalid_code` is 400 when enabling 2FA).
 * A new code needs its line here: the type makes the list complete.
 */
export const ERROR_STATUS: Readonly<Record<ErrorCode, ErrorStatus>> = {
  validation_error: 400,
  invalid_credentials: 401,
  email_exists: 409,
  invalid_token: 400,
  not_authenticated: 401,
  not_found: 404,
  method_not_allowed: 405,
  rate_limited: 429,
  account_locked: 429,
  unsupported_media_type: 415,
  payload_too_large: 413,
  service_unavailable: 503,
  internal_error: 500,
  provider_not_configured: 503,
  forbidden_origin: 403,
  reauthentication_required: 403,
  password_not_set: 400,
  last_sign_in_method: 409,
  invalid_code: 401,
  mfa_already_enabled: 409,
  mfa_not_enabled: 400,
  email_not_verified: 403,
  provider_unavailable: 503,
  passkey_invalid: 401,
  passkey_challenge_invalid: 401,
  account_disabled: 403,
  admin_unauthorized: 401,
  malformed_request: 400,
  passkey_limit_reached: 409,
  invalid_webhook_url: 400,
  webhook_limit_reached: 409,
  webhook_disabled: 409,
  already_delivered: 409,
  forbidden: 403,
  slug_taken: 409,
  last_owner: 409,
  invitation_email_mismatch: 403,
};

export interface ValidationIssue {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: ErrorStatus;
  readonly issues: ValidationIssue[] | undefined;
  /** Seconds the client should wait; sent as Retry-After on a 429. */
  readonly retryAfterSeconds: number | undefined;

  constructor(
    code: ErrorCode,
    status: ErrorStatus,
    message: string,
    options: { issues?: ValidationIssue[]; retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    // An AppError is an answer to the client (a 4xx, a 503), not a fault: it is never logged with
    // a stack, so none is captured. Capturing one deep in a request's async chain cost about 7 %
    // of a refusal (docs/performance.md). A cause keeps its own stack.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message, { cause: options.cause });
    Error.stackTraceLimit = stackTraceLimit;
    this.name = 'AppError';
    this.code = code;
    this.status = status;
    this.issues = options.issues;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** An AppError as the client reads it: the JSON error shape, with the issues of a validation error. */
export function errorAnswerBody(error: AppError): Record<string, unknown> {
  return error.issues ? { error: error.code, message: error.message, issues: error.issues } : { error: error.code, message: error.message };
}

export function validationError(issues: ValidationIssue[], message = 'The request is not valid.'): AppError {
  return new AppError('validation_error', 400, message, { issues });
}

export function badRequest(code: ErrorCode, message: string, cause?: unknown): AppError {
  return new AppError(code, 400, message, { cause });
}

export function unauthorized(code: ErrorCode, message: string, cause?: unknown): AppError {
  return new AppError(code, 401, message, { cause });
}

export function forbidden(code: ErrorCode, message: string): AppError {
  return new AppError(code, 403, message);
}

/** Said by the API's 403 and by the login page after a provider's callback alike. */
export const ACCOUNT_DISABLED_MESSAGE = 'This account is disabled. Contact the administrator of this site.';

/** The account is disabled by an operator (src/admin/): no sign-in by any method. */
export function accountDisabled(): AppError {
  return new AppError('account_disabled', 403, ACCOUNT_DISABLED_MESSAGE);
}

export function notFound(message: string): AppError {
  return new AppError('not_found', 404, message);
}

export function conflict(code: ErrorCode, message: string): AppError {
  return new AppError(code, 409, message);
}

export function tooManyRequests(code: 'rate_limited' | 'account_locked', message: string, retryAfterSeconds: number): AppError {
  return new AppError(code, 429, message, { retryAfterSeconds: Math.max(1, Math.ceil(retryAfterSeconds)) });
}

export function serviceUnavailable(message: string, cause?: unknown): AppError {
  return new AppError('service_unavailable', 503, message, { cause });
}
