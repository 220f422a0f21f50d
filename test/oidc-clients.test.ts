/**
 * OpenID Connect clients over the admin API, both databases: registration (a confidential
 * client's secret in the answer once, only its SHA-256 in the database, audit rows without it),
 * list, show, change, secret rotation, deletion, and the refusals: unknown fields, wildcard and
 * fragment redirect URIs, `javascript:`, http in production, client_credentials for a public
 * client, an unknown grant, unknown ids, a missing admin key.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { hashClientSecret, redirectUriProblem } from '../src/oidc-provider/clients.js';
import { createTestGatehouse, describeEachDialect, type TestGatehouse } from './support/harness.js';

const KEY = 'oidc-clients-test-admin-key-0123456789abcdef';
const ENCRYPTION_KEY = randomBytes(32).toString('base64');

interface Client {
  clientId: string;
  name: string;
  public: boolean;
  firstParty: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  scopes: string[];
  backchannelLogoutUri: string | null;
  idTokenSignedResponseAlg: string;
  createdAt: string;
  updatedAt: string;
}

interface ErrorBody {
  error: string;
  issues?: { path: string; message: string }[];
}

describeEachDialect('OpenID Connect clients over the admin API', (dialect) => {
  let t: TestGatehouse;
  beforeEach(async () => {
    t = await createTestGatehouse(dialect, { env: { ADMIN_API_KEY: KEY, ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY, RATE_LIMIT_ADMIN: '1000/1m' } });
  });
  afterEach(async () => {
    await t.close();
  });

  const admin = (method: string, path: string, json?: unknown) =>
    t.request(method, `/api/admin${path}`, { json, headers: { authorization: `Bearer ${KEY}` }, ip: '192.0.2.60' });
  const create = async (body: Record<string, unknown>) => {
    const response = await admin('POST', '/clients', body);
    expect(response.status).toBe(201);
    return (await response.json()) as { client: Client; clientSecret?: string };
  };
  const refused = async (response: Response) => {
    const body = (await response.json()) as ErrorBody;
    return { status: response.status, error: body.error, paths: (body.issues ?? []).map((issue) => issue.path) };
  };
  const clientRows = async () => (await sql<Record<string, unknown>>`select * from oidc_clients`.execute(t.database.kysely)).rows;
  const auditRows = async () =>
    (
      await sql<{
        event_type: string;
        ip: string | null;
        metadata: string;
      }>`select event_type, ip, metadata from audit_events where event_type like 'oidc_client_%' order by id`.execute(t.database.kysely)
    ).rows;

  test('a confidential client: its secret once, only its SHA-256 kept, audited without it', async () => {
    const { client, clientSecret } = await create({
      name: 'Billing',
      redirectUris: ['https://billing.example.com/callback'],
      postLogoutRedirectUris: ['https://billing.example.com/'],
      scopes: ['email'],
    });
    expect(clientSecret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client).toMatchObject({
      name: 'Billing',
      public: false,
      firstParty: false,
      redirectUris: ['https://billing.example.com/callback'],
      postLogoutRedirectUris: ['https://billing.example.com/'],
      grantTypes: ['authorization_code', 'refresh_token'],
      scopes: ['email', 'openid'],
      backchannelLogoutUri: null,
      idTokenSignedResponseAlg: 'ES256',
    });
    expect(client.clientId).toMatch(/^[0-9a-f]{32}$/);

    // Never shown again, and nothing in the database that works as the secret.
    expect(JSON.stringify(await (await admin('GET', `/clients/${client.clientId}`)).json())).not.toContain(clientSecret!);
    expect(JSON.stringify(await (await admin('GET', '/clients')).json())).not.toContain(clientSecret!);
    const rows = await clientRows();
    expect(JSON.stringify(rows)).not.toContain(clientSecret!);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.secret_hash).toBe(hashClientSecret(clientSecret!));

    const audit = await auditRows();
    expect(audit.map((row) => row.event_type)).toEqual(['oidc_client_created']);
    expect(audit[0]!.ip).toBe('192.0.2.60');
    expect(JSON.parse(audit[0]!.metadata)).toEqual({ actor: 'admin', clientId: client.clientId, name: 'Billing', public: false });
    expect(JSON.stringify(audit)).not.toContain(clientSecret!);
  });

  test('a public client has no secret; a native app scheme and loopback are accepted', async () => {
    const answer = await create({
      name: 'Mobile',
      public: true,
      redirectUris: ['com.example.mobile:/callback', 'http://127.0.0.1/callback'],
      grantTypes: ['authorization_code', 'refresh_token', 'device_code'],
      idTokenSignedResponseAlg: 'RS256',
      firstParty: true,
    });
    expect(answer).not.toHaveProperty('clientSecret');
    expect(answer.client).toMatchObject({ public: true, firstParty: true, idTokenSignedResponseAlg: 'RS256' });
    expect((await clientRows())[0]!.secret_hash).toBeNull();
    expect(await refused(await admin('POST', `/clients/${answer.client.clientId}/secret`))).toMatchObject({ status: 400, error: 'validation_error' });
  });

  test('list, show, change, rotate the secret (the old hash replaced), delete; each audited', async () => {
    const first = await create({ name: 'One', redirectUris: ['https://one.example.com/cb'] });
    const second = await create({ name: 'Two', grantTypes: ['client_credentials'] });
    expect(second.client.redirectUris).toEqual([]);

    const listed = (await (await admin('GET', '/clients')).json()) as { clients: Client[] };
    expect(listed.clients.map((client) => client.name).sort()).toEqual(['One', 'Two']);
    const shown = (await (await admin('GET', `/clients/${first.client.clientId}`)).json()) as { client: Client };
    expect(shown.client).toEqual(first.client);

    t.clock.advance(60_000);
    const patched = await admin('PATCH', `/clients/${first.client.clientId}`, {
      name: 'One renamed',
      redirectUris: ['https://one.example.com/cb2'],
      backchannelLogoutUri: 'https://one.example.com/logout',
      firstParty: true,
    });
    expect(patched.status).toBe(200);
    const { client: changed } = (await patched.json()) as { client: Client };
    expect(changed).toMatchObject({
      name: 'One renamed',
      redirectUris: ['https://one.example.com/cb2'],
      backchannelLogoutUri: 'https://one.example.com/logout',
      firstParty: true,
      public: false,
    });
    expect(Date.parse(changed.updatedAt)).toBeGreaterThan(Date.parse(changed.createdAt));
    expect(((await (await admin('GET', `/clients/${first.client.clientId}`)).json()) as { client: Client }).client).toEqual(changed);

    const before = (await clientRows()).find((row) => row.client_id === first.client.clientId)!.secret_hash;
    const rotated = await admin('POST', `/clients/${first.client.clientId}/secret`);
    expect(rotated.status).toBe(200);
    const { clientSecret } = (await rotated.json()) as { clientSecret: string };
    expect(clientSecret).not.toBe(first.clientSecret);
    const after = (await clientRows()).find((row) => row.client_id === first.client.clientId)!.secret_hash;
    expect(after).not.toBe(before);
    expect(after).toBe(hashClientSecret(clientSecret));
    expect(JSON.stringify(await clientRows())).not.toContain(clientSecret);

    const deleted = await admin('DELETE', `/clients/${second.client.clientId}`);
    expect([deleted.status, await deleted.json()]).toEqual([200, { deleted: true }]);
    expect(((await (await admin('GET', '/clients')).json()) as { clients: Client[] }).clients.map((client) => client.clientId)).toEqual([
      first.client.clientId,
    ]);

    const audit = await auditRows();
    expect(audit.map((row) => row.event_type)).toEqual([
      'oidc_client_created',
      'oidc_client_created',
      'oidc_client_updated',
      'oidc_client_secret_rotated',
      'oidc_client_deleted',
    ]);
    for (const row of audit) expect(JSON.parse(row.metadata)).toMatchObject({ actor: 'admin' });
    const dump = JSON.stringify(audit);
    for (const secret of [first.clientSecret!, second.clientSecret!, clientSecret]) expect(dump).not.toContain(secret);
  });

  test('refusals: 400 validation_error at the field, 404 for unknown ids, 401 without the key', async () => {
    const post = async (body: Record<string, unknown>) => refused(await admin('POST', '/clients', body));
    const cb = 'https://app.example.com/cb';
    expect(await post({ name: 'X', redirectUris: [cb], secret: 'mine' })).toMatchObject({ status: 400, error: 'validation_error' });
    expect(await post({ redirectUris: [cb] })).toMatchObject({ status: 400, error: 'validation_error', paths: ['name'] });
    expect(await post({ name: 'X', redirectUris: ['https://*.example.com/cb'] })).toMatchObject({ status: 400, paths: ['redirectUris.0'] });
    expect(await post({ name: 'X', redirectUris: [cb, 'https://app.example.com/cb#frag'] })).toMatchObject({ status: 400, paths: ['redirectUris.1'] });
    expect(await post({ name: 'X', redirectUris: ['javascript:alert(1)'] })).toMatchObject({ status: 400, paths: ['redirectUris.0'] });
    expect(await post({ name: 'X', redirectUris: [cb], postLogoutRedirectUris: ['data:text/html,x'] })).toMatchObject({
      status: 400,
      paths: ['postLogoutRedirectUris.0'],
    });
    expect(await post({ name: 'X', public: true, grantTypes: ['client_credentials'] })).toMatchObject({
      status: 400,
      error: 'validation_error',
      paths: ['grantTypes'],
    });
    expect(await post({ name: 'X', grantTypes: ['password'] })).toMatchObject({ status: 400, error: 'validation_error' });
    expect((await post({ name: 'X', grantTypes: ['password'] })).paths[0]).toMatch(/^grantTypes/);
    expect(await post({ name: 'X', grantTypes: ['authorization_code'] })).toMatchObject({ status: 400, paths: ['redirectUris'] });
    expect(await post({ name: 'X', redirectUris: [cb], scopes: ['admin'] })).toMatchObject({ status: 400 });
    expect(await post({ name: 'X', redirectUris: [cb], idTokenSignedResponseAlg: 'none' })).toMatchObject({ status: 400 });
    expect(await clientRows()).toEqual([]);

    const { client } = await create({ name: 'Y', redirectUris: [cb] });
    expect(await refused(await admin('PATCH', `/clients/${client.clientId}`, {}))).toMatchObject({ status: 400, error: 'validation_error' });
    expect(await refused(await admin('PATCH', `/clients/${client.clientId}`, { public: true }))).toMatchObject({ status: 400, error: 'validation_error' });
    expect(await refused(await admin('PATCH', `/clients/${client.clientId}`, { redirectUris: ['https://a.example/*'] }))).toMatchObject({
      status: 400,
      paths: ['redirectUris.0'],
    });
    expect(((await (await admin('GET', `/clients/${client.clientId}`)).json()) as { client: Client }).client.redirectUris).toEqual([cb]);

    for (const id of ['AAAAAAAAAAAAAAAAAAAAAA', 'not%20an%20id']) {
      expect(await refused(await admin('GET', `/clients/${id}`))).toMatchObject({ status: 404, error: 'not_found' });
      expect(await refused(await admin('PATCH', `/clients/${id}`, { name: 'Z' }))).toMatchObject({ status: 404, error: 'not_found' });
      expect(await refused(await admin('DELETE', `/clients/${id}`))).toMatchObject({ status: 404, error: 'not_found' });
      expect(await refused(await admin('POST', `/clients/${id}/secret`))).toMatchObject({ status: 404, error: 'not_found' });
    }
    expect(await refused(await t.request('GET', '/api/admin/clients'))).toMatchObject({ status: 401, error: 'admin_unauthorized' });
    expect(await refused(await t.request('POST', '/api/admin/clients', { json: { name: 'X', redirectUris: [cb] } }))).toMatchObject({ status: 401 });
    expect((await auditRows()).map((row) => row.event_type)).toEqual(['oidc_client_created']);
  });
});

describe('redirect URIs in production', () => {
  test('the admin API refuses an http redirect URI to anything but loopback', async () => {
    const t = await createTestGatehouse('sqlite', {
      env: {
        NODE_ENV: 'production',
        BASE_URL: 'https://auth.example.com',
        BCRYPT_ROUNDS: '10',
        METRICS_TOKEN: 'metrics-token-0123456789abcdef',
        ADMIN_API_KEY: KEY,
        ENCRYPTION_KEY_BASE64: ENCRYPTION_KEY,
      },
    });
    try {
      const post = (redirectUris: string[]) =>
        t.request('POST', '/api/admin/clients', { json: { name: 'X', redirectUris }, headers: { authorization: `Bearer ${KEY}` } });
      const refusedHttp = await post(['http://app.example.com/cb']);
      expect(refusedHttp.status).toBe(400);
      expect(((await refusedHttp.json()) as ErrorBody).issues).toEqual([
        { path: 'redirectUris.0', message: expect.stringMatching(/https is required/) as unknown },
      ]);
      expect((await post(['http://127.0.0.1:8080/cb', 'https://app.example.com/cb'])).status).toBe(201);
    } finally {
      await t.close();
    }
  });

  test('https, loopback http and private-use schemes only', () => {
    expect(redirectUriProblem('https://app.example.com/cb', true)).toBeNull();
    expect(redirectUriProblem('http://app.example.com/cb', true)).toMatch(/https is required/);
    expect(redirectUriProblem('http://app.example.com/cb', false)).toBeNull();
    for (const loopback of ['http://127.0.0.1/cb', 'http://[::1]:8080/cb', 'http://localhost:1234/cb']) expect(redirectUriProblem(loopback, true)).toBeNull();
    expect(redirectUriProblem('com.example.app:/callback', true)).toBeNull();
    expect(redirectUriProblem('myapp:/callback', true)).not.toBeNull();
    expect(redirectUriProblem('javascript:alert(1)', false)).not.toBeNull();
  });
});
