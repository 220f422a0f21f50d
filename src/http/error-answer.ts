/**
 * @module The one rule that turns an error into an answer, for the app (app.ts `onError`) and for
 * the Node shell's fast paths: an AppError becomes its JSON body, status and Retry-After; a
 * database outage 503 with Retry-After; anything else is logged (a bounded summary: logger.ts)
 * and becomes 500 with a request id.
 */
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, errorAnswerBody } from '../errors.js';
import type { Logger } from '../logger.js';

export interface ErrorAnswer {
  status: number;
  body: Record<string, unknown>;
  retryAfterSeconds?: number;
}

export function errorAnswerOf(error: unknown, logger: Logger, requestId: string): ErrorAnswer {
  if (error instanceof AppError) {
    return {
      status: error.status,
      body: errorAnswerBody(error),
      ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
    };
  }
  if (isDatabaseUnavailable(error)) {
    logger.warn({ requestId, code: (error as { code?: unknown }).code }, 'database unavailable');
    return {
      status: 503,
      body: { error: 'service_unavailable', message: 'The service is temporarily unavailable. Try again shortly.', requestId },
      retryAfterSeconds: 5,
    };
  }
  logger.error({ requestId, err: error }, 'unhandled error');
  return { status: 500, body: { error: 'internal_error', message: 'Something went wrong on our side.', requestId } };
}
