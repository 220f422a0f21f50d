/**
 * A small OpenID issuer on loopback (node:http, port 0) that can lie: each ID token it issues is
 * built from the claims a real issuer would send, then changed as the test asks (another nonce,
 * audience or issuer, expired, unsigned, signed by a key not in its JWKS, with a shared secret),
 * and signed with jose. A certified provider such as oidc-provider never issues such tokens, so
 * the refusals are tested against this one. It can also be down, hang, answer garbage or too much,
 * and come back, to test an unreachable issuer.
 *
 * It behaves as an issuer should otherwise: discovery at /.well-known/openid-configuration, codes
 * bound to the S256 challenge and the redirect_uri, single use, client_secret_basic at /token,
 * Bearer tokens at /userinfo, RFC 9207's `iss` on the redirect back.
 */
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { SignJWT, UnsecuredJWT, exportJWK, generateKeyPair, type JWTPayload } from 'jose';

export interface ForgedAccount {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  preferred_username?: string;
}

/** How the next ID token is signed: `foreign_key` uses a key with the issuer's kid that is not in its JWKS. */
export type Signing = 'valid' | 'unsigned' | 'foreign_key' | 'shared_secret';

/** What the discovery document (and so the issuer as a whole) does. */
export type IssuerMode = 'up' | 'refuse' | 'hang' | 'not_json' | 'wrong_issuer' | 'huge' | 'error500';

interface IssuedCode {
  account: ForgedAccount;
  nonce: string | null;
  codeChallenge: string;
  redirectUri: string;
  used: boolean;
}

export interface ForgeIssuer {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Paths requested so far. */
  readonly requests: string[];
  /** Access tokens handed out. */
  readonly issuedAccessTokens: string[];
  mode: IssuerMode;
  /** Changes the claims of the next ID token (once), after the honest ones are filled in. */
  tamperNext(change: (claims: JWTPayload) => JWTPayload, signing?: Signing): void;
  /** What /userinfo answers for the next request (once), instead of the account's claims. */
  userinfoNext(body: Record<string, unknown>): void;
  /** Plays the browser: approves Gatehouse's authorization URL as `account`; returns the callback URL. */
  authorize(authorizationUrl: string, account: ForgedAccount, options?: { iss?: string | null }): URL;
  close(): Promise<void>;
}

function readBody(request: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

export async function startForgeIssuer(): Promise<ForgeIssuer> {
  const clientId = `forge-${randomBytes(4).toString('hex')}`;
  const clientSecret = randomBytes(24).toString('base64url');
  const kid = `forge-${randomBytes(4).toString('hex')}`;
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const foreign = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };

  const codes = new Map<string, IssuedCode>();
  const accessTokens = new Map<string, ForgedAccount>();
  const requests: string[] = [];
  const issuedAccessTokens: string[] = [];
  const sockets = new Set<Socket>();
  let tamper: { change: (claims: JWTPayload) => JWTPayload; signing: Signing } | null = null;
  let userinfoOverride: Record<string, unknown> | null = null;
  let mode: IssuerMode = 'up';
  let issuer = '';

  const sign = async (claims: JWTPayload, signing: Signing): Promise<string> => {
    switch (signing) {
      case 'valid':
        return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(privateKey);
      case 'foreign_key':
        return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' }).sign(foreign.privateKey);
      case 'shared_secret':
        return new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(clientSecret));
      case 'unsigned':
        return new UnsecuredJWT(claims).encode();
    }
  };

  const json = (response: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers });
    response.end(JSON.stringify(body));
  };

  const server = http.createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://forge.invalid');
    requests.push(url.pathname);
    if (mode === 'hang') return; // accepts, never answers
    if (mode === 'refuse') {
      request.socket.destroy();
      return;
    }
    void (async () => {
      if (url.pathname === '/.well-known/openid-configuration') {
        if (mode === 'error500') return json(response, 500, { error: 'server_error' });
        if (mode === 'not_json') {
          response.writeHead(200, { 'content-type': 'text/html' });
          return response.end('<html>maintenance</html>');
        }
        if (mode === 'huge') {
          response.writeHead(200, { 'content-type': 'application/json' });
          return response.end(JSON.stringify({ issuer, padding: 'x'.repeat(2 * 1024 * 1024) }));
        }
        return json(response, 200, {
          issuer: mode === 'wrong_issuer' ? 'https://impostor.example' : issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          userinfo_endpoint: `${issuer}/userinfo`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
          code_challenge_methods_supported: ['S256'],
          authorization_response_iss_parameter_supported: true,
        });
      }
      if (url.pathname === '/jwks') return json(response, 200, jwks);
      if (url.pathname === '/token' && request.method === 'POST') {
        const form = new URLSearchParams(await readBody(request));
        // client_secret_basic: both parts form-urlencoded, then base64 (RFC 6749 §2.3.1).
        const [user, password] = Buffer.from((request.headers.authorization ?? '').replace(/^Basic /, ''), 'base64')
          .toString('utf8')
          .split(':')
          .map((part) => decodeURIComponent(part.replace(/\+/g, ' ')));
        if (user !== clientId || password !== clientSecret) return json(response, 401, { error: 'invalid_client' });
        const issued = codes.get(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (
          issued === undefined ||
          issued.used ||
          form.get('grant_type') !== 'authorization_code' ||
          form.get('redirect_uri') !== issued.redirectUri ||
          createHash('sha256').update(verifier).digest('base64url') !== issued.codeChallenge
        ) {
          return json(response, 400, { error: 'invalid_grant' });
        }
        issued.used = true;
        const accessToken = `at_${randomBytes(18).toString('base64url')}`;
        accessTokens.set(accessToken, issued.account);
        issuedAccessTokens.push(accessToken);
        const now = Math.floor(Date.now() / 1000);
        const { sub, ...profile } = issued.account;
        let claims: JWTPayload = {
          iss: issuer,
          aud: clientId,
          sub,
          iat: now,
          exp: now + 300,
          ...(issued.nonce === null ? {} : { nonce: issued.nonce }),
          ...profile,
        };
        let signing: Signing = 'valid';
        if (tamper !== null) {
          claims = tamper.change(claims);
          signing = tamper.signing;
          tamper = null;
        }
        return json(
          response,
          200,
          { access_token: accessToken, token_type: 'Bearer', expires_in: 3600, scope: 'openid email profile', id_token: await sign(claims, signing) },
          { 'cache-control': 'no-store' },
        );
      }
      if (url.pathname === '/userinfo') {
        const account = accessTokens.get((request.headers.authorization ?? '').replace(/^Bearer /, ''));
        if (account === undefined) return json(response, 401, { error: 'invalid_token' });
        const body = userinfoOverride ?? { ...account };
        userinfoOverride = null;
        return json(response, 200, body);
      }
      json(response, 404, { error: 'not_found' });
    })().catch((error: unknown) => json(response, 500, { error: String(error) }));
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    issuer,
    clientId,
    clientSecret,
    requests,
    issuedAccessTokens,
    get mode() {
      return mode;
    },
    set mode(value: IssuerMode) {
      mode = value;
    },
    tamperNext(change, signing = 'valid') {
      tamper = { change, signing };
    },
    userinfoNext(body) {
      userinfoOverride = body;
    },
    authorize(authorizationUrl, account, options = {}) {
      const url = new URL(authorizationUrl);
      if (url.origin + url.pathname !== `${issuer}/authorize`) throw new Error(`not this issuer's authorization endpoint: ${authorizationUrl}`);
      if (url.searchParams.get('client_id') !== clientId || url.searchParams.get('code_challenge_method') !== 'S256')
        throw new Error('bad authorization request');
      const code = randomBytes(16).toString('base64url');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { account, nonce: url.searchParams.get('nonce'), codeChallenge: url.searchParams.get('code_challenge')!, redirectUri, used: false });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      const iss = options.iss === undefined ? issuer : options.iss;
      if (iss !== null) back.searchParams.set('iss', iss);
      return back;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
