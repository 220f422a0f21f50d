/**
 * @module The pages of the device authorization grant (RFC 8628) at `/device`: where a person types
 * the code a TV or a command-line tool shows, confirms it, and is told it worked. The engine
 * decides what happens (it checks the code, asks for sign-in and consent through /consent/:uid);
 * these functions only render its three steps in Gatehouse's layout and the person's language.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { SafeHtml, html, renderLayout, type PageContext } from '../web/html.js';
import { pageContextFrom, type PageContextSettings } from '../web/page-context.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../web/routes.js';

export interface DevicePageDeps {
  issuer: string;
  page: PageContextSettings;
}

function pageContext(ctx: KoaContextWithOIDC, deps: DevicePageDeps): PageContext {
  const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);
  return pageContextFrom(
    {
      url: new URL(ctx.originalUrl, deps.issuer).href,
      query: (name) => first(ctx.query[name]),
      cookie: (name) => ctx.cookies.get(name) ?? undefined,
      header: (name) => ctx.get(name) || undefined,
      appendHeader: (name, value) => ctx.append(name, value),
    },
    deps.page,
  );
}

/**
 * The engine's form (its own markup, values escaped by it), without its inline focus handler: the
 * pages' policy runs no inline script.
 */
function engineForm(form: string): SafeHtml {
  return new SafeHtml(form.replace(/ onfocus="[^"]*"/g, ''));
}

function answer(ctx: KoaContextWithOIDC, body: string): void {
  ctx.set('Content-Security-Policy', PAGE_CONTENT_SECURITY_POLICY);
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
}

/** What the engine hands the input page when a code was wrong, or the sign-in was interrupted. */
interface EngineError {
  name?: string;
  userCode?: unknown;
}

export function devicePages(deps: DevicePageDeps) {
  return {
    userCodeInputSource: async (ctx: KoaContextWithOIDC, form: string, _out: unknown, error?: EngineError): Promise<void> => {
      const page = pageContext(ctx, deps);
      const { t } = page;
      const problem =
        error === undefined
          ? undefined
          : error.userCode !== undefined || error.name === 'NoCodeError'
            ? t('device.wrongCode')
            : error.name === 'AbortedError'
              ? t('device.interrupted')
              : t('device.failed');
      answer(
        ctx,
        renderLayout({
          title: t('device.title'),
          page: 'device',
          ctx: page,
          ...(problem === undefined ? {} : { message: { kind: 'error' as const, text: problem } }),
          body: html`<p>${t('device.enterCode')}</p>
${engineForm(form)}
<button type="submit" class="primary" form="op.deviceInputForm">${t('device.continue')}</button>`,
        }),
      );
    },
    userCodeConfirmSource: async (
      ctx: KoaContextWithOIDC,
      form: string,
      client: { clientName?: string; clientId: string },
      _info: unknown,
      userCode: string,
    ): Promise<void> => {
      const page = pageContext(ctx, deps);
      const { t } = page;
      answer(
        ctx,
        renderLayout({
          title: t('device.confirmTitle'),
          page: 'device',
          ctx: page,
          body: html`<p>${t('device.confirmText', { client: client.clientName ?? client.clientId })}</p>
<p class="device-code"><code>${userCode}</code></p>
<p>${t('device.confirmHint')}</p>
${engineForm(form)}
<button type="submit" class="primary" form="op.deviceConfirmForm">${t('device.continue')}</button>
<button type="submit" class="secondary" form="op.deviceConfirmForm" name="abort" value="yes">${t('device.abort')}</button>`,
        }),
      );
    },
    successSource: async (ctx: KoaContextWithOIDC): Promise<void> => {
      const page = pageContext(ctx, deps);
      const { t } = page;
      const client = ctx.oidc.client;
      answer(
        ctx,
        renderLayout({
          title: t('device.successTitle'),
          page: 'device',
          ctx: page,
          message: { kind: 'success', text: t('device.success', { client: client?.clientName ?? client?.clientId ?? '' }) },
          body: html``,
        }),
      );
    },
  };
}
