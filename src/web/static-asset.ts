/**
 * @module A static file held in memory and served as those very bytes. Every answer hands the
 * same Uint8Array to the Node adapter, which writes it to the socket as it is: a client that reads
 * slowly keeps a reference to the one copy, not a copy of its own. (Copying per request let 300
 * slow readers of the 1.7 MB Swagger UI bundle hold 540 MB; test/slow-readers.test.ts.)
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { AppEnv } from '../http/env.js';

export interface StaticAsset {
  /** Never written to after it is loaded: every answer shares it. */
  readonly body: Uint8Array<ArrayBuffer>;
  readonly etag: string;
  readonly contentType: string;
}

/** `content` is copied once, here, into bytes of its own. */
export function staticAsset(content: string | Uint8Array, contentType: string): StaticAsset {
  const body = typeof content === 'string' ? new TextEncoder().encode(content) : new Uint8Array(content);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`, contentType };
}

/** 200 with the shared bytes, or 304 to a matching If-None-Match. */
export function serveStaticAsset(c: Context<AppEnv>, asset: StaticAsset): Response {
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Cache-Control', 'no-cache');
  c.header('ETag', asset.etag);
  if (c.req.header('if-none-match') === asset.etag) return c.body(null, 304);
  return c.body(asset.body, 200, { 'Content-Type': asset.contentType });
}
