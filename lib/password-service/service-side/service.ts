import { classifyComputer, isBelow } from '../../authz/classify';
import type { Config } from '../../config';
import { sha256Hex } from '../../crypto/seal';
import { directoryRefusalCode, DirectoryInvalidCredentials, isGuid, type Directory, type DirectoryChange, type DirectoryCredentials, type LapsValues } from '../../directory';
import { fileTimeToIso, isoToFileTime } from '../../directory/objects';
import { isApiError } from '../../errors';
import { HopTimes } from '../../hop-times';
import { logger } from '../../log';
import type { InstanceSettings } from '../../setup/settings';
import type { Store } from '../../store';
import { getRecord, putRecord } from '../../store/records';
import { takeFromWindows, type AlongWith, type WindowOptions, type WindowSpec } from '../../store/window';
import { checkEnvelope, nonceItem, recordNonce, sealPassword, type ComputerSecretRequest, type LapsPayload, type LapsRequest, type ServiceRequest, type ServiceResponse } from '../link';
import { readRecoveryPassword } from './bitlocker';
import { serviceAuditChain, serviceAuditRow } from './audit';
import { PIN_KEY, ServiceContext, type Pin } from './context';
import { diagnoseLapsRights, holdsReadRight } from './diagnose';
import { resetUserPassword } from './reset';

export type { BitlockerPayload, BitlockerRequest, LapsOperation, LapsPayload, LapsRequest, ServiceRequest, ServiceResponse } from '../link';

// The password service: the only process holding the LAPS account (and the reset account). It
// re-checks everything the console decided, on its own reads, before touching a password.

/** The LAPS window of one computer: reads and expiries together (console spec, Reveal rule 4). */
export const lapsWindow = (config: Config, computerGuid: string): WindowSpec => ({
  scope: 'pwdsvc-laps',
  subject: computerGuid.toLowerCase(),
  limit: config.PasswordService.MaxLapsReadsPerTarget,
  windowMs: config.PasswordService.RateWindow * 1000,
});

/** The BitLocker window of one computer (issue 33): its own counter, limit and length, apart from LAPS. */
export const bitlockerWindow = (config: Config, computerGuid: string): WindowSpec => ({
  scope: 'pwdsvc-bitlocker',
  subject: computerGuid.toLowerCase(),
  limit: config.PasswordService.MaxBitlockerReadsPerTarget,
  windowMs: config.PasswordService.BitlockerRateWindow * 1000,
});

const isComputerSecretOp = (op: unknown) => op === 'laps.read' || op === 'laps.expire' || op === 'bitlocker.read';

/**
 * At most MaxLapsReadsPerTarget reads or expiries of one computer in any RateWindow-long span
 * (a sliding window, counted atomically across instances: DESIGN decision 12). Every attempt
 * admitted counts, whatever its outcome.
 */
export const admitLapsOperation = (store: Store, config: Config, computerGuid: string, opts?: WindowOptions & { along?: () => Promise<AlongWith[]> }, window = lapsWindow) =>
  // a computer's window is seldom in use: the admission writes first and reads only when it is
  takeFromWindows(store, [window(config, computerGuid)], { ...opts, assumeSpanEmpty: true });

/** The request's nonce was seen before: refused like any replay, nothing in it trusted. */
class LinkReplayed extends Error {}
/** The stored pin is not the one this process kept: read it again. */
class PinChanged extends Error {}

export class PasswordService {
  private readonly ctx: ServiceContext;
  private readonly audit: ReturnType<typeof serviceAuditChain>;

  constructor(store: Store, config: Config, env: NodeJS.ProcessEnv, linkKey: () => Promise<Buffer>, settingsStore: Store = store) {
    this.ctx = new ServiceContext(store, config, env, linkKey, settingsStore);
    this.audit = serviceAuditChain(store);
  }

  /** Every invocation leaves a row in the service's own chain before its answer leaves: no row, no answer. */
  async handle(envelope: unknown): Promise<ServiceResponse> {
    const hops = new HopTimes();
    const link = checkEnvelope(await this.ctx.linkKey(), envelope);
    if (!link.ok) {
      logger.warn('password service: link refused', { code: link.code });
      return this.recorded(undefined, { ok: false, code: link.code });
    }
    const req = link.request as ServiceRequest;
    // every request's nonce is recorded before anything else is done for it (a replay is refused
    // whatever it asks); a LAPS operation records it in the same write as its rate window
    const isLaps = isComputerSecretOp(req?.op);
    if (!isLaps && !(await recordNonce(this.ctx.store, link.nonce))) {
      logger.warn('password service: link refused', { code: 'link_replayed' });
      return this.recorded(undefined, { ok: false, code: 'link_replayed' });
    }
    let failed = false;
    // a LAPS operation's admission wrote its row (the operation, `admitted`): a success needs no other
    const admission = { recorded: false };
    const res = await (isLaps ? this.laps(req as ComputerSecretRequest, link.nonce, hops, admission) : this.perform(req)).catch((e: unknown): ServiceResponse => {
      if (e instanceof LinkReplayed) return { ok: false, code: 'link_replayed' };
      if (isApiError(e)) return { ok: false, code: e.code };
      logger.error('password service: internal error', { error: (e as Error).name });
      failed = true;
      return { ok: false, code: 'laps_unavailable' };
    });
    if (!res.ok && res.code === 'link_replayed') {
      logger.warn('password service: link refused', { code: res.code });
      return this.recorded(undefined, res);
    }
    const answer = admission.recorded && res.ok ? res : await hops.time('service.auditAppend', () => this.recorded(req, res, failed));
    if (isLaps) logger.info('laps_timing', { correlationId: (req as ComputerSecretRequest).correlationId, operation: req.op, hops: hops.hops, total: hops.total() });
    return answer;
  }

  private async recorded(req: ServiceRequest | undefined, res: ServiceResponse, failed = false): Promise<ServiceResponse> {
    try {
      await this.audit.append(serviceAuditRow(req, res, failed));
    } catch (e) {
      logger.error('password service: audit append failed, answer withheld', { error: (e as Error).name });
      return { ok: false, code: 'laps_unavailable' };
    }
    return res;
  }

  private async perform(req: ServiceRequest): Promise<ServiceResponse> {
    if (req.op === 'health') {
      const [laps, bitlocker] = await Promise.all([this.ctx.credentials('laps'), this.ctx.credentials('bitlocker')]);
      return { ok: true, laps: laps ? 'configured' : 'not_configured', bitlocker: bitlocker ? 'configured' : 'not_configured' };
    }
    if (req.op === 'pin') return await this.pin();
    if (req.op === 'laps.diagnose') return await this.diagnose(req);
    if (req.op === 'bitlocker.diagnose') return await this.diagnoseBitlocker(req);
    if (req.op === 'users.password.reset') return await resetUserPassword(req, this.ctx);
    return { ok: false, code: 'unknown_operation' };
  }

  /** First use pins the domain and the CA it trusts; until then every operation is refused. */
  private async pin(): Promise<ServiceResponse> {
    const s = await this.ctx.settings();
    if (!s) return { ok: false, code: 'not_configured' };
    if (this.ctx.env.HDC_PWD_DOMAIN && this.ctx.env.HDC_PWD_DOMAIN.toLowerCase() !== s.domain) return { ok: false, code: 'domain_mismatch' };
    const pin: Pin = { domain: s.domain, caSha256: sha256Hex(s.caPem), pinnedAt: new Date().toISOString() };
    const existing = await getRecord<Pin>(this.ctx.store, PIN_KEY.pk, PIN_KEY.sk);
    if (existing && this.ctx.env.HDC_PWD_ALLOW_REPIN !== '1') {
      return existing.data.domain === pin.domain && existing.data.caSha256 === pin.caSha256 ? { ok: true, pinned: s.domain } : { ok: false, code: 'already_pinned' };
    }
    await putRecord(this.ctx.store, PIN_KEY.pk, PIN_KEY.sk, pin);
    logger.info('password service pinned', { domain: s.domain });
    return { ok: true, pinned: s.domain };
  }

  /**
   * A LAPS operation; its nonce is spent on every path (with the rate window, or alone on a
   * refusal or a failure before it). A pin that changed since this process last read it refuses
   * the admission; the operation starts again once on the pin as stored now.
   */
  private async laps(req: ComputerSecretRequest, nonce: string, hops: HopTimes, admission: { recorded: boolean }): Promise<ServiceResponse> {
    const spent = { done: false };
    try {
      try {
        return await this.lapsOnce(req, nonce, hops, spent, admission);
      } catch (e) {
        if (!(e instanceof PinChanged)) throw e;
        this.ctx.forgetPin();
        return await this.lapsOnce(req, nonce, hops, spent, admission);
      }
    } catch (e) {
      if (!spent.done && !(e instanceof LinkReplayed)) await recordNonce(this.ctx.store, nonce).catch(() => undefined);
      throw e;
    }
  }

  private async lapsOnce(req: ComputerSecretRequest, nonce: string, hops: HopTimes, spent: { done: boolean }, admission: { recorded: boolean }): Promise<ServiceResponse> {
    const done = (outcome: string, extra: Record<string, unknown> = {}) =>
      logger.info('laps_operation', { operation: req.op, outcome, computer: req.computerGuid, operator: req.operator?.name, correlationId: req.correlationId, ...extra });
    const spendNonce = async () => {
      spent.done = true;
      if (!(await recordNonce(this.ctx.store, nonce))) throw new LinkReplayed();
    };
    if (!isGuid(req.computerGuid ?? '')) {
      await spendNonce();
      return { ok: false, code: 'not_found' };
    }
    // the settings are kept up to 3 s, the pin is kept and confirmed by the admission's transaction
    const [s, pin] = await hops.time('service.settingsAndPin', () => Promise.all([this.ctx.settings(), this.ctx.pinKeptOrRead()]));
    if (!s || !pin || !this.ctx.trustedBy(s, pin)) {
      await spendNonce();
      done('trust_not_pinned');
      return { ok: false, code: 'trust_not_pinned' };
    }
    // a BitLocker reveal binds as the BitLocker account, never the LAPS one (issue 33)
    const bitlocker = req.op === 'bitlocker.read';
    const creds = await this.ctx.credentials(bitlocker ? 'bitlocker' : 'laps');
    if (!creds) {
      const code = bitlocker ? 'bitlocker_not_configured' : 'laps_not_configured';
      await spendNonce();
      done(code);
      return { ok: false, code };
    }
    const dir = this.ctx.directory(s, creds);
    // the computer and the OUs that classify it are read while the admission is written (an expiry
    // never reads the password): nothing read leaves before the window admits the operation, and a
    // refused or replayed one drops what was read
    const reads = Promise.all([
      hops.time('service.ldapRead', (): Promise<LapsValues | undefined> => (req.op === 'laps.read' ? dir.readLaps(req.computerGuid) : dir.readObject(req.computerGuid).then((facts) => facts && { facts }))),
      hops.time('service.recheckReads', () => this.ctx.classificationContext(dir, s)),
    ]);
    reads.catch(() => undefined); // awaited only once admitted
    // the admission, one transaction: the link's nonce (never seen), the pin (unchanged), the
    // service chain's row for the operation (outcome `admitted`; a refusal after it adds its own
    // row) and the computer's rate window
    const row = this.audit.prepare([{ ...serviceAuditRow(req, { ok: true }), outcome: 'admitted', reason: undefined }]);
    const taken = await hops.time('service.admission', () =>
      admitLapsOperation(this.ctx.store, this.ctx.config, req.computerGuid, {
        along: async () => {
          const audit = await this.audit.draft(row);
          return [
            { name: 'link_nonce', items: [{ Put: nonceItem(this.ctx.store, nonce) }] },
            { name: 'pin', items: [this.ctx.pinUnchanged(pin)] },
            { name: 'service_audit', items: audit.items, retryable: true, lost: audit.lost, written: audit.written },
          ];
        },
      }, bitlocker ? bitlockerWindow : lapsWindow),
    );
    if (!taken.admitted && taken.refusedBy === 'link_nonce') {
      spent.done = true;
      throw new LinkReplayed();
    }
    if (!taken.admitted && taken.refusedBy === 'pin') throw new PinChanged();
    if (taken.admitted) {
      spent.done = true;
      admission.recorded = true;
    }
    if (!taken.admitted) {
      await spendNonce();
      done('rate_limited', { retryAfterMs: taken.retryAfterMs });
      return { ok: false, code: 'rate_limited', retryAfterMs: taken.retryAfterMs };
    }
    const refuse = (code: string) => {
      done(code);
      return { ok: false as const, code };
    };
    let read: LapsValues | undefined;
    let classification;
    try {
      [read, classification] = await reads;
    } catch (e) {
      if (e instanceof DirectoryInvalidCredentials) return refuse('laps_bind_failed');
      throw e;
    }
    if (!read) return refuse('not_found');
    const { facts, windows: windowsJson, legacy } = read;
    if (facts.dn.toLowerCase() !== String(req.expectedDn).toLowerCase()) return refuse('moved');
    if (!classification.managedOuDns.some((m) => isBelow(facts.dn, m))) return refuse('not_managed');
    const cls = classifyComputer(facts, classification);
    if (!(cls.kind === 'standard' || (cls.kind === 'vip' && req.vipAllowed === true))) return refuse(cls.kind === 'vip' ? 'vip_not_allowed' : 'not_manageable');

    const expiresUtc = fileTimeToIso(facts.attributes['msLAPS-PasswordExpirationTime']) ?? fileTimeToIso(facts.attributes['ms-Mcs-AdmPwdExpirationTime']) ?? null;
    if (req.op === 'laps.expire') return this.expire(dir, creds, facts.dn, facts.attributes, done);
    if (req.op === 'bitlocker.read') {
      const recovery = await readRecoveryPassword(dir, facts.dn, req.keyId);
      if (typeof recovery === 'string') return refuse(recovery);
      done('succeeded');
      return { ok: true, sealed: sealPassword(await this.ctx.linkKey(), recovery, req.computerGuid, req.correlationId) };
    }

    let payload: LapsPayload | undefined;
    if (windowsJson) {
      try {
        const j = JSON.parse(windowsJson) as { n?: string; t?: string; p?: string };
        if (typeof j.p === 'string' && j.p) {
          const updated = j.t ? fileTimeToIso(BigInt(`0x${j.t}`).toString()) : undefined;
          payload = { account: j.n ?? 'Administrator', password: j.p, updatedUtc: updated ?? null, expiresUtc, source: 'windows' };
        }
      } catch {
        return refuse('laps_no_password'); // unreadable JSON: nothing we can show
      }
    } else if (legacy) {
      // legacy LAPS stores no account name: it manages the built-in administrator unless a GPO says otherwise
      payload = { account: 'Administrator', password: legacy, updatedUtc: null, expiresUtc, source: 'legacy' };
    }
    if (!payload) return refuse(await this.emptyReason(dir, creds, facts.dn, s));
    done('succeeded', { source: payload.source });
    return { ok: true, source: payload.source, sealed: sealPassword(await this.ctx.linkKey(), payload, req.computerGuid, req.correlationId) };
  }

  /**
   * Nothing readable: when the LAPS account does hold Control Access on msLAPS-Password here (read
   * from the DACL) and the computer carries a LAPS expiration time, only an encrypted password can be
   * stored (unsupported); otherwise the directory withheld it: no readable password.
   */
  private async emptyReason(dir: Directory, creds: DirectoryCredentials, dn: string, s: InstanceSettings): Promise<string> {
    const obj = await dir.readAttributes(dn, ['msLAPS-PasswordExpirationTime']);
    const expiry = obj?.['msLAPS-PasswordExpirationTime'];
    if (expiry === undefined || (Array.isArray(expiry) && expiry.length === 0)) return 'laps_no_password';
    return (await holdsReadRight(dir, dn, await dir.accountSids(creds.user))) ? 'laps_encrypted_unsupported' : 'laps_no_password';
  }

  /** Diagnostics: the LAPS account signs in, and its rights on a sample computer per scope. */
  private async diagnose(req: { scopeDns: string[] }): Promise<ServiceResponse> {
    const s = await this.ctx.settings();
    if (!s) return { ok: false, code: 'not_configured' };
    // the pin (domain and CA, as the service reads the settings now): diagnostics name trust_not_pinned
    const trusted = await this.ctx.trusted(s);
    const creds = await this.ctx.credentials('laps');
    if (!creds) return { ok: true, trusted, identity: 'laps_identity_not_configured', scopes: [] };
    const dir = this.ctx.directory(s, creds);
    if (!(await dir.verifyCredentials(creds).catch(() => false))) return { ok: true, trusted, identity: 'laps_bind_failed', scopes: [] };
    return { ok: true, trusted, identity: 'laps_identity_ok', scopes: await diagnoseLapsRights(dir, creds, s, (req.scopeDns ?? []).slice(0, 50).map(String), await this.ctx.classificationContext(dir, s)) };
  }

  /** Diagnostics (issue 33): the BitLocker account signs in, and whether it may read the key of each sample entry (names only). */
  private async diagnoseBitlocker(req: { samples: Array<{ scope: string; dn: string }> }): Promise<ServiceResponse> {
    const s = await this.ctx.settings();
    if (!s) return { ok: false, code: 'not_configured' };
    const creds = await this.ctx.credentials('bitlocker');
    if (!creds) return { ok: true, identity: 'bitlocker_identity_not_configured', scopes: [] };
    const dir = this.ctx.directory(s, creds);
    if (!(await dir.verifyCredentials(creds).catch(() => false))) return { ok: true, identity: 'bitlocker_bind_failed', scopes: [] };
    const samples = (Array.isArray(req.samples) ? req.samples : []).slice(0, 50).filter((x) => typeof x?.dn === 'string' && typeof x?.scope === 'string');
    const scopes = await Promise.all(
      samples.map(async ({ scope, dn }) => {
        // only below a managed OU: the service never looks elsewhere on the console's word
        const managed = (await this.ctx.classificationContext(dir, s)).managedOuDns.some((m) => isBelow(dn, m));
        const readable = managed ? await dir.readableAttributeNames(dn).catch(() => new Set<string>()) : new Set<string>();
        return { scope, checks: [readable.has('msfve-recoverypassword') ? 'bitlocker_read_rights_effective' : 'bitlocker_read_rights_missing'] };
      }),
    );
    return { ok: true, identity: 'bitlocker_identity_ok', scopes };
  }

  private async expire(dir: Directory, creds: DirectoryCredentials, dn: string, attrs: Record<string, string | string[] | undefined>, done: (o: string) => void): Promise<ServiceResponse> {
    const now = isoToFileTime(Date.now());
    const changes: DirectoryChange[] = [];
    // every schema present (DESIGN decision 1): the legacy password is never written
    for (const attribute of ['msLAPS-PasswordExpirationTime', 'ms-Mcs-AdmPwdExpirationTime']) {
      if (attrs[attribute] !== undefined) changes.push({ operation: 'replace', attribute, values: [now] });
    }
    if (changes.length === 0) {
      done('laps_not_managed');
      return { ok: false, code: 'laps_not_managed' };
    }
    try {
      await dir.modify(dn, changes);
    } catch (e) {
      if (directoryRefusalCode(e, 'modify') === 'ad_denied') {
        done('ad_denied');
        return { ok: false, code: 'ad_denied' };
      }
      throw e;
    }
    done('succeeded');
    return { ok: true, expired: true };
  }
}
