/**
 * @module Reads a request body straight from Node's request stream, for the Node server shell.
 *
 * Through the WHATWG Request, a body costs a full Request object, a web ReadableStream bridged
 * from the Node stream, and a stream read: measured, that was most of the cost of a refusal with
 * a body (400, 429) and the main source of garbage under load (docs/performance.md). The app
 * never sees this module: it receives `readBody` as an optional host capability (http/env.ts).
 * The handlers the shell gives Node's own objects (a capability's fast path, such as
 * password-sign-in/fast-path.ts) read with it too, and may hand the request on with what they read.
 */
import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { AppError } from './errors.js';
import { notUtf8 } from './http/json-body.js';

const UTF8_BOM = 0xfeff;

/** Bodies a fast path read before it handed its request to the app, by request (readNodeBodyAhead). */
const readAhead = new WeakMap<IncomingMessage | Http2ServerRequest, { maxBytes: number; reading: Promise<string | null> }>();

/**
 * Reads the body as `readNodeBody` does, for a fast path that may still hand the request to the
 * app (password-sign-in/fast-path.ts): the app's own read then gets this same outcome — the text,
 * null for too long, or the same refusal — since the stream can be read only once. `maxBytes`
 * must be the bound the app reads that route's body with.
 */
export function readNodeBodyAhead(incoming: IncomingMessage, maxBytes: number): Promise<string | null> {
  const reading = readNodeBody(incoming, maxBytes);
  readAhead.set(incoming, { maxBytes, reading });
  return reading;
}

/**
 * The whole body as UTF-8 text (a leading byte-order mark dropped, as Request.text() does;
 * refused with 400 validation_error when it is not UTF-8), or null as soon as it is known to be longer than `maxBytes`: from Content-Length before reading
 * anything, or while reading a body sent without one. The rest of an over-long body is left
 * unread; the Node adapter drains or closes the connection after the answer.
 */
export function readNodeBody(incoming: IncomingMessage | Http2ServerRequest, maxBytes: number): Promise<string | null> {
  const readBefore = readAhead.get(incoming);
  if (readBefore !== undefined) {
    if (readBefore.maxBytes !== maxBytes) return Promise.reject(new Error('the request body was read ahead with another bound'));
    return readBefore.reading;
  }
  const declared = Number(incoming.headers['content-length']);
  if (declared > maxBytes) return Promise.resolve(null);
  // A stream read once emits no second 'end': waiting for one would hang the request.
  if (incoming.readableEnded) return Promise.reject(new Error('the request body has already been read'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (): void => {
      incoming.off('data', onData);
      incoming.off('end', onEnd);
      incoming.off('error', onFailure);
      incoming.off('close', onClose);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        stop();
        resolve(null);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      stop();
      // One chunk (the usual small body) is decoded as it is, without a copy.
      const bytes = (chunks.length === 1 ? chunks[0] : undefined) ?? Buffer.concat(chunks, size);
      // toString would put U+FFFD for each broken sequence and read on.
      if (!isUtf8(bytes)) {
        reject(notUtf8());
        return;
      }
      const text = bytes.toString('utf8');
      resolve(text.charCodeAt(0) === UTF8_BOM ? text.slice(1) : text);
    };
    // The client went away or the stream broke mid-body: a client error, not ours (no 500, no
    // error log line for a dropped connection).
    const onFailure = (): void => {
      stop();
      reject(new AppError('validation_error', 400, 'The request body could not be read.'));
    };
    const onClose = (): void => {
      if (!incoming.readableEnded) onFailure();
    };
    incoming.on('data', onData);
    incoming.on('end', onEnd);
    incoming.on('error', onFailure);
    incoming.on('close', onClose);
  });
}
