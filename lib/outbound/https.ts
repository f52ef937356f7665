import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { isIP } from 'node:net';
import tls from 'node:tls';
import { processEnvironment } from '../config/environment';
import { badRequest } from '../errors';
import { logger } from '../log';
import { compileAllowedTargets, decideAddress, decideTarget, literalAddress, refusedUrlTarget, type AllowedTargets, type Resolver, type TargetPolicy } from './policy';

export { compileAllowedTargets, type AllowedTargets } from './policy';

// Every outbound call of both applications (console polls, notification channels, the approval
// webhook, the access proxy's certificate) goes through here (fleet spec, Authentication 6 and
// Limits): https only, TLS verified against the system store plus NODE_EXTRA_CA_CERTS (plus a
// console's own CA), no redirect followed, 10 s for the whole exchange, the answer read up to
// 256 KiB. Before anything is sent the target passes the outbound policy (./policy.ts): the
// name is resolved once, every address is checked, and the connection goes to the checked
// address (SNI and Host stay the name), so a second DNS answer cannot move it elsewhere.
//
// Whatever fails before a verified TLS session (a refused target, a name that does not resolve,
// a closed or filtered port, a handshake or a certificate that does not verify, a timeout
// there) is one answer, `connect_error`: telling them apart would let whoever can register a
// URL map ports and hosts. The detail goes to the log only (docs/decisions.md, issue 25). The
// peer certificate is returned only from a session that verified, or that verified except for
// the certificate's dates (the certificate rule must see an expired certificate; fleet spec).

export const OUTBOUND_TIMEOUT_MS = 10_000;
export const OUTBOUND_MAX_BYTES = 256 * 1024;

/**
 * `connect_error`: no verified session (refused by the policy, unresolved, closed, unreachable,
 * TLS not verified, or no answer before one). `timeout`: a verified server did not answer in time.
 */
export type OutboundError = 'invalid_url' | 'connect_error' | 'timeout' | 'redirect_refused' | 'http_error' | 'response_too_large';

export interface PeerCertificate {
  validTo: string; // ISO
  validFrom: string;
  subject: string;
  fingerprint256: string;
}

export interface OutboundResult {
  ok: boolean;
  status?: number;
  error?: OutboundError;
  body?: Buffer;
  /** only from a session that verified, or verified apart from the certificate's dates */
  cert?: PeerCertificate;
  ms: number;
}

export interface OutboundRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** extra trusted CAs (PEM), beside the system store and NODE_EXTRA_CA_CERTS */
  ca?: string;
  timeoutMs?: number;
  maxBytes?: number;
  /** what the log line of a failure names (e.g. `{ channel: id }`): never the URL */
  logContext?: Record<string, string>;
}

/** What the outbound side trusts: CAs, and the targets beyond the public ones. */
export interface OutboundTrust {
  /** PEM bundle added to the system store; default: the file named by NODE_EXTRA_CA_CERTS */
  extraCaPem?: string;
  /** the allow-list (Outbound:AllowedTargets, FLEET_OUTBOUND_ALLOWED_TARGETS); default: none */
  allow?: AllowedTargets;
  /** tests: a resolver of their own */
  resolve?: Resolver;
}

/** The trust of a configuration's allow-list setting (its entries as the config loader keeps them). */
export const outboundTrust = (allowedTargets: readonly string[] | undefined, over: OutboundTrust = {}): OutboundTrust => ({ allow: compileAllowedTargets(allowedTargets ?? []), ...over });

const targetPolicy = (trust: OutboundTrust): TargetPolicy => ({ allow: trust.allow, resolve: trust.resolve });

/**
 * Registration of a URL the product will call (a console, a channel): 400 `target_refused`
 * naming the field when the policy refuses its target now (its address, its name, or an address
 * the name resolves to). The reason goes to the log only. A name that does not resolve yet is
 * accepted: every connection decides again.
 */
export async function requireAdmittedUrl(url: string, trust: OutboundTrust = {}, field = 'url'): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return; // the field's own validation answers for that
  }
  const reason = await refusedUrlTarget(parsed, targetPolicy(trust));
  if (!reason) return;
  logger.warn('outbound_target_refused', { field, reason });
  throw badRequest('target_refused', { fields: { [field]: 'a loopback, private, link-local or reserved address, which the product does not call unless the outbound allow-list admits it' } });
}

// ---- trust: one secure context per distinct CA set (building one with the whole store costs ms)

const PEM_RE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
export const splitPem = (pem: string | undefined): string[] => (pem ? (pem.match(PEM_RE) ?? []) : []);

let extraFromEnv: string[] | undefined;
function envExtraCas(): string[] {
  if (extraFromEnv) return extraFromEnv;
  const file = processEnvironment().NODE_EXTRA_CA_CERTS;
  try {
    extraFromEnv = file ? splitPem(fs.readFileSync(file, 'utf8')) : [];
  } catch {
    extraFromEnv = []; // Node itself only warns about an unreadable file
  }
  return extraFromEnv;
}

const contexts = new Map<string, tls.SecureContext>();
/** undefined: Node's default store (the system's plus NODE_EXTRA_CA_CERTS, loaded at process start). */
function secureContextFor(trust: OutboundTrust, ca: string | undefined): tls.SecureContext | undefined {
  if (trust.extraCaPem === undefined && !ca) return undefined;
  const id = `${trust.extraCaPem ?? '(env)'}\u0000${ca ?? ''}`; // a string key: no hashing or parsing per request
  let ctx = contexts.get(id);
  if (!ctx) {
    // tls.rootCertificates lacks NODE_EXTRA_CA_CERTS: an explicit store adds that file again
    const extras = [...(trust.extraCaPem !== undefined ? splitPem(trust.extraCaPem) : envExtraCas()), ...splitPem(ca)];
    ctx = tls.createSecureContext({ ca: [...tls.rootCertificates, ...extras], minVersion: 'TLSv1.2' });
    if (contexts.size > 256) contexts.clear();
    contexts.set(id, ctx);
  }
  return ctx;
}

// ---- errors: the caller learns connect_error; the log learns why

function failureDetail(e: NodeJS.ErrnoException): string {
  return String(e.code ?? e.name ?? 'error').slice(0, 64);
}

function logFailure(req: OutboundRequest, phase: string, reason: string) {
  logger.warn('outbound_failed', { ...req.logContext, phase, reason });
}

function peerCertificate(socket: tls.TLSSocket): PeerCertificate | undefined {
  try {
    const raw = socket.getPeerX509Certificate?.();
    if (!raw) return undefined;
    return { validTo: new Date(raw.validTo).toISOString(), validFrom: new Date(raw.validFrom).toISOString(), subject: raw.subject.replace(/\n/g, ', '), fingerprint256: raw.fingerprint256 };
  } catch {
    return undefined;
  }
}

// ---- a certificate that verifies except for its dates (the certificate rule reads it)

const anchorSets = new Map<string, X509Certificate[]>();
function anchorsFor(trust: OutboundTrust, ca: string | undefined): X509Certificate[] {
  const id = `${trust.extraCaPem ?? '(env)'}\u0000${ca ?? ''}`;
  let out = anchorSets.get(id);
  if (!out) {
    const pems = [...tls.rootCertificates, ...(trust.extraCaPem !== undefined ? splitPem(trust.extraCaPem) : envExtraCas()), ...splitPem(ca)];
    out = pems.flatMap((p) => {
      try {
        return [new X509Certificate(p)];
      } catch {
        return [];
      }
    });
    if (anchorSets.size > 64) anchorSets.clear();
    anchorSets.set(id, out);
  }
  return out;
}

const DATE_ERRORS = new Set(['CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID']);

/**
 * Verification failed on a date only: does the presented chain lead to a trusted CA, each link
 * signed by the next, the leaf naming the host? Then its dates may be read (an expired
 * console certificate must raise its alert), though nothing is sent on this connection.
 */
function verifiedApartFromDates(socket: tls.TLSSocket, host: string, trust: OutboundTrust, ca: string | undefined): boolean {
  if (!DATE_ERRORS.has(String(socket.authorizationError))) return false;
  try {
    const chain: X509Certificate[] = [];
    const seen = new Set<string>();
    for (let c: tls.DetailedPeerCertificate | undefined = socket.getPeerCertificate(true); c?.raw && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
      seen.add(c.fingerprint256);
      chain.push(new X509Certificate(c.raw));
    }
    if (!chain.length) return false;
    const leaf = chain[0];
    if (!(isIP(host) ? leaf.checkIP(host) : leaf.checkHost(host))) return false;
    for (let i = 0; i + 1 < chain.length; i++) if (!(chain[i].checkIssued(chain[i + 1]) && chain[i].verify(chain[i + 1].publicKey))) return false;
    const anchors = anchorsFor(trust, ca);
    return chain.some((c) => anchors.some((t) => t.fingerprint256 === c.fingerprint256 || (c.checkIssued(t) && c.verify(t.publicKey))));
  } catch {
    return false;
  }
}

/** One HTTPS exchange under the outbound rules. Never throws: the result says what happened. */
export async function httpsRequest(req: OutboundRequest, trust: OutboundTrust = {}): Promise<OutboundResult> {
  const started = Date.now();
  const timeoutMs = req.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = req.maxBytes ?? OUTBOUND_MAX_BYTES;
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return { ok: false, error: 'invalid_url', ms: 0 };
  }
  if (url.protocol !== 'https:' || url.username || url.password) return { ok: false, error: 'invalid_url', ms: 0 };
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);
  const unreachable = (phase: string, reason: string): OutboundResult => {
    logFailure(req, phase, reason);
    return { ok: false, error: 'connect_error', ms: Date.now() - started };
  };

  // the policy: resolved once, inside the same 10 s
  let timer: NodeJS.Timeout | undefined;
  const decision = await Promise.race([
    decideTarget(host, port, targetPolicy(trust)),
    new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs))),
  ]);
  clearTimeout(timer);
  if (decision === 'timeout') return unreachable('resolve', 'timeout');
  if (!decision.admitted) return unreachable('policy', decision.reason);
  const address = decision.address.address;
  const name = literalAddress(host) ? undefined : host.replace(/\.$/, '');

  return new Promise<OutboundResult>((resolve) => {
    let done = false;
    let cert: PeerCertificate | undefined;
    let phase: 'tcp' | 'tls' | 'http' = 'tcp';
    let request: http.ClientRequest | undefined;
    const finish = (r: Omit<OutboundResult, 'ms' | 'cert'>) => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      request?.destroy();
      socket.destroy();
      resolve({ ...r, ...(cert ? { cert } : {}), ms: Date.now() - started });
    };
    const failBeforeVerified = (reason: string) => {
      if (done) return;
      logFailure(req, phase, reason);
      finish({ ok: false, error: 'connect_error' });
    };
    const deadline = setTimeout(() => (phase === 'http' ? finish({ ok: false, error: 'timeout' }) : failBeforeVerified('timeout')), Math.max(0, timeoutMs - (Date.now() - started)));
    const ctx = secureContextFor(trust, req.ca);
    // the checked address, never the name again: SNI and the identity check use the name
    const socket = tls.connect({
      host: address,
      port,
      ...(name ? { servername: name } : {}),
      ...(ctx ? { secureContext: ctx } : {}),
      rejectUnauthorized: false, // decided below, after the certificate was read
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('connect', () => (phase = 'tls'));
    socket.on('error', (e) => {
      if (phase !== 'http') return failBeforeVerified(failureDetail(e));
      logFailure(req, 'http', failureDetail(e));
      finish({ ok: false, error: 'connect_error' });
    });
    socket.once('secureConnect', () => {
      if (!socket.authorized) {
        if (verifiedApartFromDates(socket, name ?? address, trust, req.ca)) cert = peerCertificate(socket);
        return failBeforeVerified(String(socket.authorizationError ?? 'unverified').slice(0, 64));
      }
      cert = peerCertificate(socket);
      phase = 'http';
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      request = http.request(
        {
          method: req.method ?? 'GET',
          host: name ?? address,
          port,
          path: `${url.pathname}${url.search}`,
          headers: { host: url.host, 'user-agent': 'hdc', ...(body ? { 'content-length': String(body.length) } : {}), ...req.headers },
          createConnection: () => socket,
        },
        (res) => {
          const status = res.statusCode ?? 0;
          if (status >= 300 && status < 400) return finish({ ok: false, status, error: 'redirect_refused' });
          const declared = Number(res.headers['content-length'] ?? NaN);
          if (declared > maxBytes) return finish({ ok: false, status, error: 'response_too_large' });
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            size += c.length;
            if (size > maxBytes) return finish({ ok: false, status, error: 'response_too_large' });
            chunks.push(c);
          });
          res.on('end', () => {
            const ok = status >= 200 && status < 300;
            finish({ ok, status, body: Buffer.concat(chunks), ...(ok ? {} : { error: 'http_error' as const }) });
          });
          res.on('error', (e) => {
            logFailure(req, 'http', failureDetail(e));
            finish({ ok: false, status, error: 'connect_error' });
          });
        },
      );
      request.on('error', (e) => {
        logFailure(req, 'http', failureDetail(e));
        finish({ ok: false, error: 'connect_error' });
      });
      request.end(body);
    });
  });
}

// ---- agents for clients that bring their own HTTP stack (acme-client's axios, the DNS provider)

class PolicyRefusal extends Error {
  constructor(readonly reason: string) {
    super(`outbound target refused (${reason})`);
    this.name = 'OutboundRefused';
    (this as NodeJS.ErrnoException).code = 'EOUTBOUNDREFUSED';
  }
}

/**
 * A `lookup` for net/tls.connect under the policy: the name is resolved once, every address
 * checked, and only the first checked one handed to the socket (so it connects there).
 */
export function policyLookup(trust: OutboundTrust, port: () => number): net.LookupFunction {
  return ((hostname: string, options: { all?: boolean } | number | ((...a: unknown[]) => void), callback?: (...a: unknown[]) => void) => {
    const cb = (typeof options === 'function' ? options : callback)!;
    const all = typeof options === 'object' && options?.all;
    decideTarget(hostname, port(), targetPolicy(trust)).then(
      (d) => {
        if (!d.admitted) return cb(new PolicyRefusal(d.reason));
        if (all) cb(null, [{ address: d.address.address, family: d.address.family }]);
        else cb(null, d.address.address, d.address.family);
      },
      (e) => cb(e),
    );
  }) as unknown as net.LookupFunction;
}

type AgentCtor = typeof https.Agent | typeof http.Agent;

function policyAgentClass<T extends AgentCtor>(Base: T, trust: OutboundTrust) {
  return class extends Base {
    createConnection(options: net.NetConnectOpts & { host?: string; port?: number }, cb: (err: Error | null, s?: net.Socket) => void) {
      const port = Number(options.port);
      const host = String(options.host ?? '').replace(/^\[|\]$/g, '');
      const literal = literalAddress(host);
      if (literal) {
        // a literal address is never looked up: decided here
        const d = decideAddress(literal, port, trust.allow);
        if (!d.admitted) {
          logger.warn('outbound_failed', { phase: 'policy', reason: d.reason });
          cb(new PolicyRefusal(d.reason));
          return undefined;
        }
        return super.createConnection({ ...options, host: d.address.address }, cb);
      }
      return super.createConnection({ ...options, lookup: policyLookup(trust, () => port) }, cb);
    }
  };
}

/** An https.Agent (and an http.Agent for a loopback stand-in) whose every connection passes the policy. */
export function outboundAgents(trust: OutboundTrust): { https: https.Agent; http: http.Agent } {
  const H = policyAgentClass(https.Agent, trust) as unknown as typeof https.Agent;
  const P = policyAgentClass(http.Agent, trust) as unknown as typeof http.Agent;
  return { https: new H({ keepAlive: false }), http: new P({ keepAlive: false }) };
}
