/**
 * A WebAuthn authenticator in software, for the server-side passkey tests: it answers the options
 * of `navigator.credentials.create()` and `.get()` the way a browser and a platform authenticator
 * would, as the JSON @simplewebauthn/browser sends (base64url fields). ES256 keys from node:crypto,
 * attestation "none", discoverable credentials (the user handle is kept), a signature counter per
 * credential. Each answer can be bent (another origin, a given counter, a broken signature) so the
 * tests can show the server refuses it.
 *
 * Written from the WebAuthn Level 3 spec, not from the library under test: authenticator data is
 * rpIdHash ‖ flags ‖ signCount ‖ [aaguid ‖ credIdLen ‖ credId ‖ COSE key]; an assertion signs
 * authenticatorData ‖ SHA-256(clientDataJSON).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

const FLAG_UP = 0x01;
const FLAG_UV = 0x04;
const FLAG_BE = 0x08;
const FLAG_BS = 0x10;
const FLAG_AT = 0x40;

const b64url = (bytes: Uint8Array | Buffer | string): string => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string): Buffer => createHash('sha256').update(data).digest();

// --- A minimal CBOR encoder (RFC 8949): the integers, byte and text strings and maps COSE keys and attestation objects use.
type CborValue = number | string | Uint8Array | Map<CborValue, CborValue> | { [key: string]: CborValue };

function cborHead(major: number, length: number): Buffer {
  if (length < 24) return Buffer.from([(major << 5) | length]);
  if (length < 0x100) return Buffer.from([(major << 5) | 24, length]);
  if (length < 0x10000) {
    const head = Buffer.alloc(3);
    head[0] = (major << 5) | 25;
    head.writeUInt16BE(length, 1);
    return head;
  }
  const head = Buffer.alloc(5);
  head[0] = (major << 5) | 26;
  head.writeUInt32BE(length, 1);
  return head;
}

export function cborEncode(value: CborValue): Buffer {
  if (typeof value === 'number') {
    if (!Number.isInteger(value)) throw new Error('only integers');
    return value >= 0 ? cborHead(0, value) : cborHead(1, -1 - value);
  }
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8');
    return Buffer.concat([cborHead(3, bytes.length), bytes]);
  }
  if (value instanceof Uint8Array) return Buffer.concat([cborHead(2, value.length), Buffer.from(value)]);
  const entries: [CborValue, CborValue][] = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([cborHead(5, entries.length), ...entries.flatMap(([key, item]) => [cborEncode(key), cborEncode(item)])]);
}

// --- The authenticator

export interface StoredCredential {
  id: Buffer;
  privateKey: KeyObject;
  /** The COSE_Key of the public key. */
  cosePublicKey: Buffer;
  rpId: string;
  userHandle: string;
  counter: number;
}

/** The parts of PublicKeyCredentialCreationOptionsJSON this authenticator reads. */
export interface CreationOptions {
  challenge: string;
  rp: { id?: string; name: string };
  user: { id: string; name: string; displayName: string };
  excludeCredentials?: { id: string }[];
}

export interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: { id: string }[];
}

export interface Bends {
  /** The origin the "browser" reports; default the authenticator's own. */
  origin?: string;
  /** The RP id whose hash goes into authenticator data; default the options' own. */
  rpId?: string;
  /** The challenge put in clientDataJSON; default the options' own. */
  challenge?: string;
  /** The signature counter to report (the stored one is then set to it). */
  counter?: number;
  /** Sign other bytes than the right ones: a well-formed signature that does not verify. */
  badSignature?: boolean;
  /** Which credential answers; default the first for the RP id. */
  credentialId?: string;
  /** User verified (UV flag); default true. */
  userVerified?: boolean;
  /** Registration: put a point that is not on P-256 (all-zero coordinates) in the COSE key. */
  offCurvePublicKey?: boolean;
}

export class SoftwareAuthenticator {
  readonly credentials: StoredCredential[] = [];
  readonly aaguid = Buffer.alloc(16);

  constructor(readonly origin: string) {}

  private clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
    return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }), 'utf8');
  }

  private authenticatorData(rpId: string, flags: number, counter: number, attested?: Buffer): Buffer {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter, 0);
    return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, ...(attested ? [attested] : [])]);
  }

  /** `navigator.credentials.create()`: a new ES256 discoverable credential, attestation "none". */
  create(options: CreationOptions, bends: Bends = {}): { response: RegistrationResponse; credential: StoredCredential } {
    const rpId = bends.rpId ?? options.rp.id ?? new URL(this.origin).hostname;
    const excluded = new Set((options.excludeCredentials ?? []).map((each) => each.id));
    if (this.credentials.some((each) => excluded.has(b64url(each.id)))) throw new Error('InvalidStateError: a credential of this authenticator is excluded');
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cosePublicKey = cborEncode(
      new Map<CborValue, CborValue>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, bends.offCurvePublicKey ? Buffer.alloc(32) : Buffer.from(jwk.x!, 'base64url')],
        [-3, bends.offCurvePublicKey ? Buffer.alloc(32) : Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const id = randomBytes(32);
    const credential: StoredCredential = { id, privateKey, cosePublicKey, rpId, userHandle: options.user.id, counter: bends.counter ?? 0 };
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(id.length, 0);
    const attested = Buffer.concat([this.aaguid, idLength, id, cosePublicKey]);
    const flags = FLAG_UP | (bends.userVerified === false ? 0 : FLAG_UV) | FLAG_BE | FLAG_BS | FLAG_AT;
    const authData = this.authenticatorData(rpId, flags, credential.counter, attested);
    const attestationObject = cborEncode({ fmt: 'none', attStmt: {}, authData });
    const clientDataJSON = this.clientData('webauthn.create', bends.challenge ?? options.challenge, bends.origin ?? this.origin);
    this.credentials.push(credential);
    return {
      credential,
      response: {
        id: b64url(id),
        rawId: b64url(id),
        type: 'public-key',
        response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ['internal', 'hybrid'] },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      },
    };
  }

  /** A credential for `rpId` registered nowhere: what a server that never saw it must refuse. */
  withCredentialFor(rpId: string): this {
    this.create({ challenge: b64url(randomBytes(32)), rp: { id: rpId, name: '' }, user: { id: b64url(randomBytes(16)), name: '', displayName: '' } });
    return this;
  }

  /** `navigator.credentials.get()` with an empty allow list: a discoverable credential of the RP id answers. */
  get(options: RequestOptions, bends: Bends = {}): AuthenticationResponse {
    const rpId = options.rpId ?? new URL(this.origin).hostname;
    const allowed = new Set((options.allowCredentials ?? []).map((each) => each.id));
    const credential = this.credentials.find(
      (each) =>
        (bends.credentialId === undefined ? each.rpId === rpId : b64url(each.id) === bends.credentialId) &&
        (allowed.size === 0 || allowed.has(b64url(each.id))),
    );
    if (credential === undefined) throw new Error('NotAllowedError: no credential for this RP');
    credential.counter = bends.counter ?? credential.counter + 1;
    const flags = FLAG_UP | (bends.userVerified === false ? 0 : FLAG_UV) | FLAG_BE | FLAG_BS;
    const authData = this.authenticatorData(bends.rpId ?? credential.rpId, flags, credential.counter);
    const clientDataJSON = this.clientData('webauthn.get', bends.challenge ?? options.challenge, bends.origin ?? this.origin);
    const signed = Buffer.concat([authData, sha256(clientDataJSON)]);
    if (bends.badSignature) signed[0] = signed[0]! ^ 0xff;
    const signature = sign('sha256', signed, credential.privateKey);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: 'platform',
    };
  }
}

export interface RegistrationResponse {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; attestationObject: string; transports: string[] };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}

export interface AuthenticationResponse {
  id: string;
  rawId: string;
  type: 'public-key';
  response: { clientDataJSON: string; authenticatorData: string; signature: string; userHandle: string };
  clientExtensionResults: Record<string, never>;
  authenticatorAttachment: 'platform';
}
