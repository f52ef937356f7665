import { z } from 'zod';
import { openString } from '../../crypto/seal';
import { httpsRequest, type OutboundError, type OutboundTrust, type PeerCertificate } from '../../outbound/https';
import type { ConsoleRecord } from '../consoles';
import { reported, REPORTED_DC_URL, REPORTED_NAME, REPORTED_PROBLEM, REPORTED_VERSION, REPORTED_WORD } from './reported';

// One poll of one console: GET <url>/api/fleet/v1/status with its bearer token, under the
// outbound rules (lib/outbound/https.ts), the answer parsed leniently: fields the fleet does not
// know are ignored, a field it needs and cannot read is "no data" for the rules that use it.
// Every text the console reports must match a strict pattern, else it is kept as `unparseable`
// (./reported.ts): a reported version once reached a generated shell script verbatim.

export const STATUS_PATH = '/api/fleet/v1/status';

const point = z.object({ seq: z.number().int().min(0), hash: z.string().regex(/^[0-9a-f]{64}$/) });

export const consoleStatusSchema = z.object({
  instance: z.object({ version: reported(REPORTED_VERSION).optional() }).partial().default({}),
  health: z.object({ status: reported(REPORTED_WORD) }),
  audit: z
    .object({
      chain: reported(REPORTED_WORD).optional(),
      failedLogins24h: z.number().int().min(0).nullable().optional(),
      firstBadSeq: z.number().int().optional(),
      problem: reported(REPORTED_PROBLEM).optional(),
      /** the newest row of the console's chain (the fleet keeps it as its witness) */
      head: point.nullable().optional(),
      /** the console's hash at the sequence the fleet witnessed before (null: purged or absent) */
      witness: z.object({ seq: z.number().int().min(0), hash: reported(/^[0-9a-f]{64}$/).nullable() }).nullable().optional(),
    })
    .default({}),
  directory: z
    .object({ dcs: z.array(z.object({ name: reported(REPORTED_NAME), url: reported(REPORTED_DC_URL).optional(), state: reported(REPORTED_WORD) })).max(64).default([]) })
    .default({ dcs: [] }),
});
export type ConsoleStatus = z.output<typeof consoleStatusSchema>;

/** A console's answer (or a stored status) as the fleet keeps it: undefined when its shape cannot be read. */
export function readConsoleStatus(body: unknown): ConsoleStatus | undefined {
  const r = consoleStatusSchema.safeParse(body);
  return r.success ? r.data : undefined;
}

export type PollError = OutboundError | 'invalid_response' | 'token_unreadable';

export interface PollResult {
  ok: boolean;
  at: string;
  ms: number;
  status?: ConsoleStatus;
  error?: PollError;
  httpStatus?: number;
  /** the certificate the console presented, from a session that verified (or verified apart from its dates) */
  cert?: PeerCertificate;
}

export interface PollOptions {
  masterKey: Buffer;
  trust?: OutboundTrust;
  timeoutMs?: number;
  /** the audit sequence the fleet witnessed before: the console answers its hash there */
  witnessSeq?: number;
}

const tokenAad = (id: string) => `fleet-console-token:${id}`;

export async function pollConsole(c: ConsoleRecord, opts: PollOptions): Promise<PollResult> {
  const at = new Date().toISOString();
  let token: string;
  try {
    token = openString(opts.masterKey, c.sealedToken, tokenAad(c.id));
  } catch {
    return { ok: false, at, ms: 0, error: 'token_unreadable' };
  }
  const query = opts.witnessSeq !== undefined ? `?witnessSeq=${opts.witnessSeq}` : '';
  const r = await httpsRequest(
    { url: `${c.url}${STATUS_PATH}${query}`, method: 'GET', headers: { authorization: `Bearer ${token}`, accept: 'application/json' }, ca: c.ca, timeoutMs: opts.timeoutMs, logContext: { console: c.id } },
    opts.trust,
  );
  const base = { at, ms: r.ms, ...(r.cert ? { cert: r.cert } : {}), ...(r.status ? { httpStatus: r.status } : {}) };
  if (!r.ok) return { ok: false, ...base, error: r.error };
  let status: ConsoleStatus | undefined;
  try {
    status = readConsoleStatus(JSON.parse(r.body!.toString('utf8')));
  } catch {
    status = undefined;
  }
  return status ? { ok: true, ...base, status } : { ok: false, ...base, error: 'invalid_response' };
}
