/**
 * @module OpenID Connect back-channel logout, sent off the request path with retries. When a
 * person's sessions end — a logout, a revocation, a password change or reset, an operator's
 * disable, a deletion — the flow queues a notice for every app that holds a grant of theirs and
 * registered a back-channel logout URI (db/oidc-logout-store.ts). This worker signs each app's
 * logout token with the provider's keys at send time (`sub` only: it ends every session the app
 * has for the person) and POSTs it under the webhooks' address rule and timeout, retrying on a
 * schedule until the app answers 2xx.
 */
import { randomUUID } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { CapabilityWorker } from '../capability.js';
import type { Clock } from '../clock.js';
import type { Logger } from '../logger.js';
import { sendWebhook, type SendSettings } from '../webhooks/send.js';
import type { ClaimedLogoutNotice, LogoutNoticeStore, OidcClientStore } from './store.js';

/** After each failed attempt, the next is this much later; past the last, the notice fails. */
export const LOGOUT_RETRY_DELAYS_MS: readonly number[] = [5_000, 60_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 6 * 3_600_000];
const POLL_MS = 2_000;
const ROUND_SIZE = 16;
/** Delivered and failed notices are kept this long, for operators reading the table. */
export const NOTICE_RETENTION_MS = 7 * 24 * 3_600_000;

export interface LogoutWorkerDeps {
  notices: LogoutNoticeStore;
  clients: OidcClientStore;
  provider: () => Promise<Provider>;
  send: SendSettings;
  clock: Clock;
  logger: Logger;
}

/** The logout token (OpenID Connect Back-Channel Logout 1.0 §2.4), signed like the client's ID tokens. */
async function logoutToken(provider: Provider, clientId: string, accountId: string): Promise<string | null> {
  const client = await provider.Client.find(clientId);
  if (client === undefined) return null;
  const IdToken = provider.IdToken as unknown as new (
    claims: object,
    options: { client: unknown },
  ) => {
    mask: object;
    set(key: string, value: unknown): void;
    issue(options: { use: 'logout' }): Promise<string>;
  };
  const token = new IdToken({ sub: accountId }, { client });
  token.mask = { sub: null };
  token.set('events', { 'http://schemas.openid.net/event/backchannel-logout': {} });
  token.set('jti', randomUUID());
  return token.issue({ use: 'logout' });
}

export function createLogoutWorker(deps: LogoutWorkerDeps): CapabilityWorker {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<number> | null = null;

  const deliver = async (notice: ClaimedLogoutNotice): Promise<void> => {
    const now = deps.clock.now();
    const found = await deps.clients.findClient(notice.clientId);
    const url = found?.client.backchannelLogoutUri ?? null;
    const token = url === null ? null : await logoutToken(await deps.provider(), notice.clientId, notice.accountId);
    if (url === null || token === null) {
      await deps.notices.recordNoticeAttempt(notice.id, { status: 'failed', nextAttemptAt: now, error: 'the client or its back-channel logout URI is gone' });
      return;
    }
    const result = await sendWebhook(
      url,
      { 'content-type': 'application/x-www-form-urlencoded' },
      new URLSearchParams({ logout_token: token }).toString(),
      deps.send,
    );
    if (result.delivered) {
      await deps.notices.recordNoticeAttempt(notice.id, { status: 'delivered', nextAttemptAt: now, error: null });
      return;
    }
    const delay = LOGOUT_RETRY_DELAYS_MS[notice.attempts];
    const error = result.error ?? `answered ${result.statusCode}`;
    deps.logger.warn({ clientId: notice.clientId, attempt: notice.attempts + 1, error }, 'back-channel logout not delivered');
    await deps.notices.recordNoticeAttempt(notice.id, {
      status: delay === undefined ? 'failed' : 'pending',
      nextAttemptAt: new Date(now.getTime() + (delay ?? 0)),
      error,
    });
  };

  const round = async (): Promise<number> => {
    const due = await deps.notices.claimDueNotices(deps.clock.now(), ROUND_SIZE, deps.send.timeoutMs + 30_000);
    for (const notice of due) await deliver(notice);
    return due.length;
  };

  const tick = (): void => {
    running ??= round()
      .catch((error: unknown) => {
        deps.logger.warn({ err: error }, 'could not send back-channel logouts');
        return 0;
      })
      .finally(() => {
        running = null;
      });
  };

  return {
    start() {
      timer ??= setInterval(tick, POLL_MS);
      timer.unref();
    },
    async drain() {
      await running;
      let sent = 0;
      for (let count = await round(); count > 0; count = await round()) sent += count;
      return { logoutNotices: sent };
    },
    async stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
