/** @module Hono's typed environment for Gatehouse routes. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestContext } from '../request-context.js';

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
  /**
   * The Node request and answer, from the Node server only: the OpenID Connect provider's sign-in
   * and consent steps read the engine's cookies through them (oidc-provider works on Node's objects).
   */
  node?: { incoming: IncomingMessage; outgoing: ServerResponse };
}

/** The headers of the answer being built (answer.ts), kept on the request's context. */
export interface AnswerHeaders {
  headers: Record<string, string>;
  /** Serialised Set-Cookie values, in order. */
  cookies: string[];
}

export interface AppEnv {
  Bindings: ConnectionInfo;
  Variables: { requestContext: RequestContext; answer: AnswerHeaders };
}
