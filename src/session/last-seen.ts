/**
 * @module Keeps `lastSeenAt` of sessions roughly current without slowing the session check: the
 * check only notices that a session was last seen a minute ago or more (session/flow.ts), and the
 * write happens here, off the response path. Within one process a session is written at most
 * once at a time; across instances the store's condition (`touchSession`) keeps it to about once
 * a minute.
 */
import type { BackgroundTasks } from '../background.js';
import { LAST_SEEN_INTERVAL_MS } from './flow.js';
import type { SessionStore } from './store.js';

export function createLastSeenRecorder(sessions: Pick<SessionStore, 'touchSession'>, background: BackgroundTasks): (sessionId: string, now: Date) => void {
  const writing = new Set<string>();
  return (sessionId, now) => {
    if (writing.has(sessionId)) return;
    writing.add(sessionId);
    background.run('session last seen', async () => {
      try {
        await sessions.touchSession(sessionId, now, LAST_SEEN_INTERVAL_MS);
      } finally {
        writing.delete(sessionId);
      }
    });
  };
}
