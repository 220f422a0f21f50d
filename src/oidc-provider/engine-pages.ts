/**
 * @module The pages the OpenID Connect engine shows itself, in Gatehouse's layout and the person's
 * language: the device authorization grant (RFC 8628) at `/device` — where a person types the code
 * a TV or a command-line tool shows, confirms it, and is told it worked — and the sign-out an app
 * asks for (RP-initiated logout): the question, and the page after it when the app named no
 * address to return to. The engine decides what happens (it checks the code and the xsrf token,
 * asks for sign-in and consent through /consent/:uid); these functions only render its steps.
 */
import type { KoaContextWithOIDC } from 'oidc-provider';
import { SafeHtml, html, renderLayout, type PageContext } from '../web/html.js';
import { pageContextFrom, type PageContextSettings } from '../web/page-context.js';
import { PAGE_CONTENT_SECURITY_POLICY } from '../web/routes.js';
import { formActionSources } from './client-metadata.js';

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

/**
 * The pages' policy; `formTargets`: origins a form's redirect chain may end on besides this one
 * (the browser checks form-action on every hop: a sign-out ends at the app's own address).
 */
function answer(ctx: KoaContextWithOIDC, body: string, formTargets: readonly string[] = []): void {
  const policy =
    formTargets.length === 0
      ? PAGE_CONTENT_SECURITY_POLICY
      : PAGE_CONTENT_SECURITY_POLICY.replace("form-action 'self'", `form-action 'self' ${formTargets.join(' ')}`);
  ctx.set('Content-Security-Policy', policy);
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

export function logoutPages(deps: DevicePageDeps) {
  return {
    logoutSource: async (ctx: KoaContextWithOIDC, form: string): Promise<void> => {
      const page = pageContext(ctx, deps);
      const { t } = page;
      const client = ctx.oidc.client;
      const question = client === undefined ? t('logout.question') : t('logout.questionFromApp', { app: client.clientName ?? client.clientId });
      answer(
        ctx,
        renderLayout({
          title: t('logout.title'),
          page: 'logout',
          ctx: page,
          body: html`<p>${question}</p>
${engineForm(form)}
<button type="submit" class="primary" form="op.logoutForm" name="logout" value="yes">${t('logout.yes')}</button>
<button type="submit" class="secondary" form="op.logoutForm">${t('logout.no')}</button>`,
        }),
        formActionSources(client?.postLogoutRedirectUris ?? []),
      );
    },
    postLogoutSuccessSource: async (ctx: KoaContextWithOIDC): Promise<void> => {
      const page = pageContext(ctx, deps);
      const { t } = page;
      answer(
        ctx,
        renderLayout({
          title: t('logout.doneTitle'),
          page: 'logout',
          ctx: page,
          message: { kind: 'success', text: t('logout.done') },
          body: html`<nav class="links"><p><a href="/login">${t('common.backToSignIn')}</a></p></nav>`,
        }),
      );
    },
  };
}
