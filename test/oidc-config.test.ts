/**
 * OIDC_PROVIDERS and the OIDC_<ID>_* variables: presets, defaults, what stops the start (a
 * malformed list) and what only turns one provider off (its own variables, answered with 503
 * naming them), and what GET /api/auth/providers and the login page then offer.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, test } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const SHARED = { AUTH_SECRET: 'test-auth-secret-0123456789', ENCRYPTION_KEY_BASE64: randomBytes(32).toString('base64') };

function problemsOf(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('OIDC_PROVIDERS in loadConfig()', () => {
  test('unset: no OpenID provider', () => {
    expect(loadConfig({}).oidcProviders).toEqual([]);
  });

  test('the presets need only a client id and secret; the default scopes are openid email profile', () => {
    const env: Record<string, string> = { ...SHARED, OIDC_PROVIDERS: 'google, gitlab,microsoft' };
    for (const id of ['GOOGLE', 'GITLAB', 'MICROSOFT']) {
      env[`OIDC_${id}_CLIENT_ID`] = `${id}-id`;
      env[`OIDC_${id}_CLIENT_SECRET`] = `${id}-secret`;
    }
    const providers = loadConfig(env).oidcProviders;
    expect(providers.map(({ id, name, config, problems }) => ({ id, name, issuer: config?.issuer, scopes: config?.scopes, problems }))).toEqual([
      { id: 'google', name: 'Google', issuer: 'https://accounts.google.com', scopes: ['openid', 'email', 'profile'], problems: [] },
      { id: 'gitlab', name: 'GitLab', issuer: 'https://gitlab.com', scopes: ['openid', 'email', 'profile'], problems: [] },
      { id: 'microsoft', name: 'Microsoft', issuer: 'https://login.microsoftonline.com/common/v2.0', scopes: ['openid', 'email', 'profile'], problems: [] },
    ]);
    expect(providers[0]!.config).toMatchObject({ clientId: 'GOOGLE-id', clientSecret: 'GOOGLE-secret' });
  });

  test("a preset's issuer, name and scopes can be overridden (Microsoft for one tenant, a self-managed GitLab)", () => {
    const [gitlab] = loadConfig({
      ...SHARED,
      OIDC_PROVIDERS: 'gitlab',
      OIDC_GITLAB_ISSUER: 'https://gitlab.example.com',
      OIDC_GITLAB_CLIENT_ID: 'id',
      OIDC_GITLAB_CLIENT_SECRET: 'secret',
      OIDC_GITLAB_NAME: 'Our GitLab',
      OIDC_GITLAB_SCOPES: 'openid email read_user',
    }).oidcProviders;
    expect(gitlab).toMatchObject({
      name: 'Our GitLab',
      config: { issuer: 'https://gitlab.example.com', scopes: ['openid', 'email', 'read_user'] },
      problems: [],
    });
  });

  test('OIDC_<ID>_TRUST_EMAIL: true for a preset at its own host, false for any other issuer unless set; anything but true or false is a problem', () => {
    const env: Record<string, string> = { ...SHARED, OIDC_PROVIDERS: 'google,gitlab,microsoft,corp,own,bad' };
    for (const id of ['GOOGLE', 'GITLAB', 'MICROSOFT', 'CORP', 'OWN', 'BAD']) {
      env[`OIDC_${id}_CLIENT_ID`] = 'id';
      env[`OIDC_${id}_CLIENT_SECRET`] = 'secret';
    }
    // Microsoft for one tenant stays at Microsoft's host; a self-managed GitLab is another issuer.
    env.OIDC_MICROSOFT_ISSUER = 'https://login.microsoftonline.com/0b5f2ab6-7f0e-4a7b-9f51-8a1e2c3d4e5f/v2.0';
    env.OIDC_GITLAB_ISSUER = 'https://gitlab.example.com';
    env.OIDC_GOOGLE_TRUST_EMAIL = 'false';
    env.OIDC_CORP_ISSUER = 'https://idp.example.com';
    env.OIDC_OWN_ISSUER = 'https://sso.example.com';
    env.OIDC_OWN_TRUST_EMAIL = 'true';
    env.OIDC_BAD_ISSUER = 'https://bad.example.com';
    env.OIDC_BAD_TRUST_EMAIL = 'yes';
    const providers = loadConfig(env).oidcProviders;
    expect(providers.map(({ id, config }) => [id, config?.trustEmail ?? null])).toEqual([
      ['google', false],
      ['gitlab', false],
      ['microsoft', true],
      ['corp', false],
      ['own', true],
      ['bad', null],
    ]);
    expect(providers.find((provider) => provider.id === 'bad')!.problems).toEqual(['OIDC_BAD_TRUST_EMAIL must be true or false, got "yes"']);
    const presets = loadConfig({ ...env, OIDC_PROVIDERS: 'google,gitlab', OIDC_GOOGLE_TRUST_EMAIL: '', OIDC_GITLAB_ISSUER: '' }).oidcProviders;
    expect(presets.map(({ config }) => config?.trustEmail)).toEqual([true, true]);
  });

  test("a provider's missing or malformed variables never stop the start: they are its problems, each named", () => {
    const providers = loadConfig({
      ...SHARED,
      OIDC_PROVIDERS: 'acme,google,corp,named',
      OIDC_ACME_CLIENT_ID: 'id',
      OIDC_GOOGLE_CLIENT_ID: 'id',
      OIDC_CORP_ISSUER: 'not a url',
      OIDC_CORP_CLIENT_ID: 'id',
      OIDC_CORP_CLIENT_SECRET: 'secret',
      OIDC_CORP_SCOPES: 'email profile',
      OIDC_NAMED_ISSUER: 'https://idp.example.com?tenant=1',
      OIDC_NAMED_CLIENT_ID: 'id',
      OIDC_NAMED_CLIENT_SECRET: 'secret',
      OIDC_NAMED_NAME: '<b>Named</b>',
    }).oidcProviders;
    const [acme, google, corp, named] = providers;
    expect(acme!.config).toBeNull();
    expect(acme!.problems).toEqual([
      "OIDC_ACME_ISSUER must be set (the provider's issuer URL, such as https://idp.example.com)",
      'OIDC_ACME_CLIENT_SECRET must be set',
    ]);
    expect(google!.problems).toEqual(['OIDC_GOOGLE_CLIENT_SECRET must be set']);
    expect(corp!.problems.join('\n')).toMatch(/^OIDC_CORP_ISSUER must be an http\(s\) URL/);
    expect(corp!.problems.join('\n')).toMatch(/OIDC_CORP_SCOPES must be space-separated scopes that include openid/);
    expect(named!.problems.join('\n')).toMatch(/OIDC_NAMED_ISSUER must be an http\(s\) URL without query or fragment/);
    expect(named!.problems.join('\n')).toMatch(/OIDC_NAMED_NAME must be a plain label/);
    // A problem quotes the malformed value of an issuer or scope list, never a client secret.
    for (const provider of providers) expect(provider.problems.join('\n')).not.toContain('"secret"');
  });

  test('without AUTH_SECRET or ENCRYPTION_KEY_BASE64 every provider is off, and says so', () => {
    const [acme] = loadConfig({
      OIDC_PROVIDERS: 'acme',
      OIDC_ACME_ISSUER: 'https://idp.example.com',
      OIDC_ACME_CLIENT_ID: 'id',
      OIDC_ACME_CLIENT_SECRET: 'secret',
    }).oidcProviders;
    expect(acme!.config).not.toBeNull();
    expect(acme!.problems).toEqual(['AUTH_SECRET must be set (at least 16 characters)', 'ENCRYPTION_KEY_BASE64 must be set (base64 of 32 random bytes)']);
  });

  test('a plain-http issuer is accepted outside production only', () => {
    const env = {
      ...SHARED,
      OIDC_PROVIDERS: 'local',
      OIDC_LOCAL_ISSUER: 'http://127.0.0.1:8080',
      OIDC_LOCAL_CLIENT_ID: 'id',
      OIDC_LOCAL_CLIENT_SECRET: 'secret',
    };
    expect(loadConfig(env).oidcProviders[0]!.problems).toEqual([]);
    const production = loadConfig({
      ...env,
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(40),
      BASE_URL: 'https://auth.example.com',
      METRICS_PUBLIC: 'true',
    }).oidcProviders[0]!;
    expect(production.config).toBeNull();
    expect(production.problems).toEqual([
      'OIDC_LOCAL_ISSUER must be an https:// URL in production (plain http only outside production), got "http://127.0.0.1:8080"',
    ]);
  });

  test('a malformed OIDC_PROVIDERS stops the start, naming the variable: bad ids, github, duplicates', () => {
    expect(problemsOf({ OIDC_PROVIDERS: 'Acme' })).toEqual([
      'OIDC_PROVIDERS: expected comma-separated ids of lowercase letters, digits and _ (at most 32, starting with a letter), got "Acme"',
    ]);
    expect(problemsOf({ OIDC_PROVIDERS: 'acme-sso' })[0]).toMatch(/^OIDC_PROVIDERS: expected/);
    expect(problemsOf({ OIDC_PROVIDERS: `a${'b'.repeat(32)}` })[0]).toMatch(/^OIDC_PROVIDERS: expected/);
    expect(problemsOf({ OIDC_PROVIDERS: 'github' })[0]).toMatch(/^OIDC_PROVIDERS: "github" is the built-in GitHub provider/);
    expect(problemsOf({ OIDC_PROVIDERS: 'acme,acme' })).toEqual(['OIDC_PROVIDERS: "acme" is listed twice']);
    expect(problemsOf({ OIDC_PROVIDERS: ' , acme_2 ,' })).toEqual([]);
  });
});

describeEachDialect('OpenID providers that are off', (dialect) => {
  let t: TestGatehouse;
  afterEach(async () => {
    await t.close();
  });

  test('a provider missing a variable answers 503 provider_not_configured naming it; it gets no button; the others work', async () => {
    t = await createTestGatehouse(dialect, {
      env: {
        ...SHARED,
        GITHUB_CLIENT_ID: 'gh-id',
        GITHUB_CLIENT_SECRET: 'gh-secret',
        OIDC_PROVIDERS: 'google,acme',
        OIDC_GOOGLE_CLIENT_ID: 'google-id',
        OIDC_ACME_ISSUER: 'https://idp.example.com',
        OIDC_ACME_CLIENT_ID: 'acme-id',
        OIDC_ACME_CLIENT_SECRET: 'acme-secret',
        OIDC_ACME_NAME: 'Acme',
      },
    });
    const google = await t.request('GET', '/api/auth/oauth/google');
    expect(google.status).toBe(503);
    expect(await google.json()).toEqual({
      error: 'provider_not_configured',
      message: 'Sign-in with Google is not configured: OIDC_GOOGLE_CLIENT_SECRET must be set.',
    });
    const callback = await t.request('GET', '/api/auth/callback/google?code=x&state=y');
    expect(callback.status).toBe(503);

    expect(await (await t.request('GET', '/api/auth/providers')).json()).toEqual({
      providers: [
        { id: 'github', name: 'GitHub' },
        { id: 'acme', name: 'Acme' },
      ],
    });
    const page = await (await t.request('GET', '/login')).text();
    expect(page).toContain('id="github-sign-in"');
    expect(page).toContain('Sign in with Acme</a>');
    expect(page).not.toContain('google-sign-in');
    // An id that is not configured at all is no provider.
    expect((await t.request('GET', '/api/auth/oauth/gitlab')).status).toBe(404);
  });

  test('without AUTH_SECRET: GET /providers is empty, /login has no provider button, every start answers 503', async () => {
    t = await createTestGatehouse(dialect, {
      env: { OIDC_PROVIDERS: 'acme', OIDC_ACME_ISSUER: 'https://idp.example.com', OIDC_ACME_CLIENT_ID: 'id', OIDC_ACME_CLIENT_SECRET: 'secret' },
    });
    expect(await (await t.request('GET', '/api/auth/providers')).json()).toEqual({ providers: [] });
    expect(await (await t.request('GET', '/login')).text()).not.toContain('-sign-in"');
    const start = await t.request('GET', '/api/auth/oauth/acme');
    expect(start.status).toBe(503);
    expect(((await start.json()) as { message: string }).message).toMatch(/AUTH_SECRET must be set/);
  });
});
