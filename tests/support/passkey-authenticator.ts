import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';

// A software WebAuthn authenticator for the tests (issue 32): real ES256 keys, attestation 'none'
// and real assertions, so the server's checks (origin, rpId, challenge, user verification,
// counter, signature) run on what a browser would send. Each call may bend one thing a real
// authenticator or a phishing page would: the origin, the UV flag, the counter.

/** A minimal CBOR encoder (RFC 8949): unsigned and negative integers, byte and text strings, maps. */
function cbor(v: unknown): Buffer {
  const head = (major: number, n: number) => {
    if (n < 24) return Buffer.from([(major << 5) | n]);
    if (n < 256) return Buffer.from([(major << 5) | 24, n]);
    if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
    const b = Buffer.alloc(5);
    b[0] = (major << 5) | 26;
    b.writeUInt32BE(n, 1);
    return b;
  };
  if (typeof v === 'number') return v >= 0 ? head(0, v) : head(1, -1 - v);
  if (Buffer.isBuffer(v)) return Buffer.concat([head(2, v.length), v]);
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'utf8');
    return Buffer.concat([head(3, b.length), b]);
  }
  if (v instanceof Map) return Buffer.concat([head(5, v.size), ...[...v].flatMap(([k, x]) => [cbor(k), cbor(x)])]);
  throw new Error('cbor: unsupported value');
}

const b64u = (b: Buffer) => b.toString('base64url');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest();
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

interface Credential {
  id: Buffer;
  key: KeyObject;
  counter: number;
  rpId: string;
  userHandle: Buffer;
}
export interface Bend {
  /** the origin the client data names (a phishing page's) */
  origin?: string;
  /** the UV flag (false: user present only) */
  uv?: boolean;
  /** the signature counter to report (e.g. lower than the last: a cloned authenticator) */
  counter?: number;
  /** the rpId whose hash the authenticator data carries */
  rpId?: string;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  constructor(readonly origin: string) {}

  /** navigator.credentials.create(): a new ES256 credential, attestation 'none'. */
  create(options: { challenge: string; rp: { id?: string }; user: { id: string } }, bend: Bend = {}) {
    const rpId = bend.rpId ?? options.rp.id!;
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const id = randomBytes(32);
    const cose = cbor(new Map<number, unknown>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, 'base64url')], [-3, Buffer.from(jwk.y!, 'base64url')]]));
    const flags = 0x01 | (bend.uv === false ? 0 : 0x04) | 0x40;
    const idLen = Buffer.from([id.length >> 8, id.length & 0xff]);
    const authData = Buffer.concat([sha256(rpId), Buffer.from([flags]), u32(0), Buffer.alloc(16), idLen, id, cose]);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.create', challenge: options.challenge, origin: bend.origin ?? this.origin, crossOrigin: false }));
    const attestation = cbor(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]));
    this.credentials.push({ id, key: privateKey, counter: 0, rpId, userHandle: Buffer.from(options.user.id, 'base64url') });
    return {
      id: b64u(id),
      rawId: b64u(id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64u(clientData), attestationObject: b64u(attestation), transports: ['internal'] },
      clientExtensionResults: {},
    };
  }

  /** navigator.credentials.get(): an assertion by the first allowed credential (or the one given). */
  get(options: { challenge: string; rpId?: string; allowCredentials?: Array<{ id: string }> }, bend: Bend & { credential?: Credential } = {}) {
    const allowed = options.allowCredentials?.map((c) => c.id) ?? [];
    const cred = bend.credential ?? this.credentials.find((c) => !allowed.length || allowed.includes(b64u(c.id)));
    if (!cred) throw new Error('no credential for these options');
    cred.counter = bend.counter ?? cred.counter + 1;
    const flags = 0x01 | (bend.uv === false ? 0 : 0x04);
    const authData = Buffer.concat([sha256(bend.rpId ?? options.rpId ?? cred.rpId), Buffer.from([flags]), u32(cred.counter)]);
    const clientData = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin: bend.origin ?? this.origin, crossOrigin: false }));
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), cred.key);
    return {
      id: b64u(cred.id),
      rawId: b64u(cred.id),
      type: 'public-key' as const,
      response: { clientDataJSON: b64u(clientData), authenticatorData: b64u(authData), signature: b64u(signature), userHandle: b64u(cred.userHandle) },
      clientExtensionResults: {},
    };
  }
}
