/** @module Hono's typed environment for Gatehouse routes. */
import type { RequestContext } from '../request-context.js';

/** What the host passes along with a request (the Node server: the socket's peer address). */
export interface ConnectionInfo {
  remoteAddress?: string;
}

export interface AppEnv {
  Bindings: ConnectionInfo;
  Variables: { requestContext: RequestContext };
}
