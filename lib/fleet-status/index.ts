import { failedSignIns24h } from '../auth/signin';
import { constantTimeEqual, randomToken, sha256Hex } from '../crypto/seal';
import { unauthorized } from '../errors';
import { checkDcs } from '../setup';
import type { ConsoleRuntime } from '../runtime';
import { openString } from '../crypto/seal';
import { ping } from '../store';
import { getRecord, putRecord } from '../store/records';

// The read-only status the fleet plane polls (GET /api/fleet/v1/status), bearer token only.
// The token is issued by the admin CLI (`issue-fleet-token`), shown once, stored as its SHA-256.
const TOKEN_KEY = { pk: 'INSTANCE', sk: 'FLEET_TOKEN' };

export async function issueFleetToken(rt: ConsoleRuntime): Promise<string> {
  const token = `hdcf_${randomToken(32)}`;
  await putRecord(rt.store, TOKEN_KEY.pk, TOKEN_KEY.sk, { hash: sha256Hex(token), issuedAt: new Date().toISOString() });
  return token;
}

export async function checkFleetToken(rt: ConsoleRuntime, authorization: string | undefined): Promise<void> {
  const m = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
  const rec = await getRecord<{ hash: string }>(rt.store, TOKEN_KEY.pk, TOKEN_KEY.sk);
  if (!m || !rec || !constantTimeEqual(sha256Hex(m[1]), rec.data.hash)) throw unauthorized('invalid_token');
}

/**
 * The chain's newest row (the fleet keeps it as its off-box witness) and, when the fleet names
 * the sequence it witnessed before, this console's hash at that sequence (null: purged or absent).
 */
async function auditHead(rt: ConsoleRuntime, witnessSeq: number | undefined) {
  const { anchorSeq, headSeq } = await rt.audit.extent();
  const row = headSeq > anchorSeq ? await rt.audit.row(headSeq) : undefined;
  const witness = witnessSeq !== undefined ? { seq: witnessSeq, hash: (await rt.audit.row(witnessSeq))?.hash ?? null } : undefined;
  return { head: row ? { seq: row.seq, hash: row.hash } : null, ...(witness ? { witness } : {}) };
}

export async function fleetStatus(rt: ConsoleRuntime, version: string, opts: { witnessSeq?: number } = {}) {
  let database = true;
  try {
    await ping(rt.store);
  } catch {
    database = false;
  }
  const settings = database ? await rt.settings() : undefined;
  let dcs: Array<{ name: string; url: string; ok: boolean; problem?: string }> = [];
  if (settings) {
    const password = openString(await rt.masterKey(), settings.readAccount.sealedPassword, 'tech-account:read');
    dcs = await checkDcs(rt, settings.dcs, settings.caPem, { user: settings.readAccount.user, password });
  }
  // each poll: one bounded incremental check from the signed checkpoint (new rows, the checkpoint
  // row re-hashed, the next slice of the rolling sample) plus the background full walk's last result
  const chain = database ? await rt.audit.check() : undefined;
  const working = dcs.filter((d) => d.ok).length;
  const status = !database || !settings || working === 0 ? 'unhealthy' : working < dcs.length || dcs.length < 2 || !chain?.ok ? 'degraded' : 'healthy';
  return {
    instance: { version, configured: !!settings, domain: settings?.domain },
    health: { status, database: database ? 'ok' : 'failed' },
    audit: {
      chain: chain ? (chain.ok ? 'ok' : 'broken') : 'unknown',
      ...(chain && !chain.ok ? { firstBadSeq: chain.firstBadSeq, problem: chain.problem } : {}),
      lastFullVerificationAt: chain?.full.last?.completedAt || null,
      failedLogins24h: database ? await failedSignIns24h(rt) : null,
      ...(database ? await auditHead(rt, opts.witnessSeq) : {}),
    },
    directory: { dcs: dcs.map((d) => ({ name: d.name, url: d.url, state: d.ok ? 'up' : 'down', ...(d.problem ? { problem: d.problem } : {}) })) },
  };
}
