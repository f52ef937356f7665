import type { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { isIP } from 'node:net';
import tls from 'node:tls';
import { processEnvironment } from '../config/environment';

// Every outbound call of both applications (console polls, notification channels) goes through
// here (fleet spec, Authentication 6 and Limits): https only, TLS verified against the system
// store plus NODE_EXTRA_CA_CERTS (plus a console's own CA), no redirect followed, 10 s for the
// whole exchange, the answer read up to 256 KiB. The TLS handshake is done first and on its own:
// the peer certificate is read even when verification fails (the certificate rule needs it),
// and nothing (no bearer token, no body) is written to a connection that did not verify.

export const OUTBOUND_TIMEOUT_MS = 10_000;
export const OUTBOUND_MAX_BYTES = 256 * 1024;

export type OutboundError =
  | 'invalid_url'
  | 'dns_error'
  | 'connect_error'
  | 'tls_error'
  | 'timeout'
  | 'redirect_refused'
  | 'http_error'
  | 'response_too_large';

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
  /** a short machine-readable reason (e.g. CERT_HAS_EXPIRED), never a secret */
  detail?: string;
  body?: Buffer;
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
}

export interface OutboundTrust {
  /** PEM bundle added to the system store; default: the file named by NODE_EXTRA_CA_CERTS */
  extraCaPem?: string;
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

// ---- errors

function classify(e: NodeJS.ErrnoException, phase: 'tcp' | 'tls' | 'http'): { error: OutboundError; detail: string } {
  const code = e.code ?? e.name ?? 'error';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return { error: 'dns_error', detail: code };
  if (phase === 'tcp' && /^E(CONNREFUSED|CONNRESET|HOSTUNREACH|NETUNREACH|ADDRNOTAVAIL|PIPE|ACCES)$/.test(code)) return { error: 'connect_error', detail: code };
  if (phase === 'tls' || /^ERR_SSL|^ERR_TLS|EPROTO/.test(code)) return { error: 'tls_error', detail: code };
  return { error: 'connect_error', detail: code };
}

function peerCertificate(socket: tls.TLSSocket): PeerCertificate | undefined {
  try {
    const raw = socket.getPeerX509Certificate?.();
    if (!raw) return undefined;
    const c = raw as X509Certificate;
    return { validTo: new Date(c.validTo).toISOString(), validFrom: new Date(c.validFrom).toISOString(), subject: c.subject.replace(/\n/g, ', '), fingerprint256: c.fingerprint256 };
  } catch {
    return undefined;
  }
}

/** One HTTPS exchange under the outbound rules. Never throws: the result says what happened. */
export function httpsRequest(req: OutboundRequest, trust: OutboundTrust = {}): Promise<OutboundResult> {
  const started = Date.now();
  const timeoutMs = req.timeoutMs ?? OUTBOUND_TIMEOUT_MS;
  const maxBytes = req.maxBytes ?? OUTBOUND_MAX_BYTES;
  let url: URL;
  try {
    url = new URL(req.url);
  } catch {
    return Promise.resolve({ ok: false, error: 'invalid_url', ms: 0 });
  }
  if (url.protocol !== 'https:' || url.username || url.password) return Promise.resolve({ ok: false, error: 'invalid_url', ms: 0 });
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || 443);

  return new Promise<OutboundResult>((resolve) => {
    let done = false;
    let cert: PeerCertificate | undefined;
    let phase: 'tcp' | 'tls' | 'http' = 'tcp';
    let request: http.ClientRequest | undefined;
    const finish = (r: Omit<OutboundResult, 'ms' | 'cert'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      request?.destroy();
      socket.destroy();
      resolve({ ...r, ...(cert ? { cert } : {}), ms: Date.now() - started });
    };
    const timer = setTimeout(() => finish({ ok: false, error: 'timeout', detail: phase }), timeoutMs);
    const ctx = secureContextFor(trust, req.ca);
    const socket = tls.connect({
      host,
      port,
      ...(isIP(host) ? {} : { servername: host }),
      ...(ctx ? { secureContext: ctx } : {}),
      rejectUnauthorized: false, // decided below, after the certificate was read
      ALPNProtocols: ['http/1.1'],
    });
    socket.once('connect', () => (phase = 'tls'));
    socket.on('error', (e) => finish({ ok: false, ...classify(e, phase) }));
    socket.once('secureConnect', () => {
      cert = peerCertificate(socket);
      if (!socket.authorized) return finish({ ok: false, error: 'tls_error', detail: String(socket.authorizationError ?? 'unverified') });
      phase = 'http';
      const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
      request = http.request(
        {
          method: req.method ?? 'GET',
          host,
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
          res.on('error', (e) => finish({ ok: false, status, ...classify(e, 'http') }));
        },
      );
      request.on('error', (e) => finish({ ok: false, ...classify(e, 'http') }));
      request.end(body);
    });
  });
}
