/** @module Hono's typed environment for Gatehouse routes. */
import type { RequestContext } from '../request-context.js';
import type { AnswerHeaders } from './answer.js';

/** What the host passes along with a request (the Node server: the socket's peer address). */
export interface ConnectionInfo {
  remoteAddress?: string;
  /**
   * Reads the request body as text, at most `maxBytes` bytes; null when it is longer. A host
   * that can read the body more cheaply than through the WHATWG Request passes this (the Node
   * server reads its request stream directly); without it the body is read with Request.text()
   * under the body-limit middleware (app.ts).
   */
  readBody?: (maxBytes: number) => Promise<string | null>;
}

export interface AppEnv {
  Bindings: ConnectionInfo;
  Variables: { requestContext: RequestContext; answer: AnswerHeaders };
}
