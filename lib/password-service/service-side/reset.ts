import { randomInt } from 'node:crypto';
import { classifyUser, isBelow } from '../../authz/classify';
import { directoryRefusalCode, DirectoryInvalidCredentials, isGuid } from '../../directory';
import { isTrue, USER_ATTRIBUTES } from '../../directory/objects';
import { logger } from '../../log';
import { sealResetPassword, type ResetRequest } from '../link';
import type { ServiceContext } from './context';

export type { ResetRequest };

// users.password.reset in the password service, the only holder of the reset account: it checks
// again what the console decided (user under a managed OU, at the DN the decision was made on,
// classified standard, or VIP when the decision included vip.manage, not the operator's own
// account), generates the password, sets it, and returns it sealed to the console. The password
// is never stored, logged or audited.

const UPPER = 'ABCDEFGHJKLMNPQRSTUVWXYZ';
const LOWER = 'abcdefghijkmnopqrstuvwxyz';
const DIGIT = '23456789';
const SYMBOL = '!#%+-=?@_';

/** 20 characters from four classes (domain complexity), no look-alikes, crypto randomness. */
export function generatePassword(length = 20): string {
  const all = UPPER + LOWER + DIGIT + SYMBOL;
  const chars = [UPPER, LOWER, DIGIT, SYMBOL].map((set) => set[randomInt(set.length)]);
  while (chars.length < length) chars.push(all[randomInt(all.length)]);
  for (let i = chars.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [chars[i], chars[j]] = [chars[j], chars[i]];
  }
  // never a leading `=`, `+`, `-` or `@`: a spreadsheet would read the bulk reset's CSV cell as a formula
  // (and CSV exports neutralise such a cell with a quote, which would change the password)
  const k = chars.findIndex((ch) => !'=+-@'.includes(ch));
  [chars[0], chars[k]] = [chars[k], chars[0]];
  return chars.join('');
}

export async function resetUserPassword(req: ResetRequest, ctx: ServiceContext): Promise<{ ok: true; sealed: string } | { ok: false; code: string }> {
  const done = (outcome: string) =>
    logger.info('reset_operation', { operation: req.op, outcome, user: req.userGuid, operator: req.operator?.name, correlationId: req.correlationId });
  const refuse = (code: string) => {
    done(code);
    return { ok: false as const, code };
  };
  if (!isGuid(req.userGuid ?? '')) return refuse('not_found');
  const s = await ctx.settings();
  if (!s || !(await ctx.trusted(s))) return refuse('trust_not_pinned');
  const creds = await ctx.credentials('reset');
  if (!creds) return refuse('reset_not_configured');
  // the LAPS account is never the reset account (console spec, Authentication 8): such a reset
  // account counts as not configured (the log line says why)
  if (creds.user.trim().toLowerCase() === ctx.config.PasswordService.LapsIdentity.Upn?.trim().toLowerCase()) {
    done('laps_account_not_allowed');
    return { ok: false as const, code: 'reset_not_configured' };
  }
  const dir = ctx.directory(s, creds);
  let facts;
  try {
    facts = await dir.readObject(req.userGuid, USER_ATTRIBUTES);
  } catch (e) {
    if (e instanceof DirectoryInvalidCredentials) return refuse('reset_bind_failed');
    throw e;
  }
  if (!facts) return refuse('not_found');
  if (facts.dn.toLowerCase() !== String(req.expectedDn).toLowerCase()) return refuse('moved');
  if (facts.guid.toLowerCase() === String(req.operator?.guid).toLowerCase()) return refuse('own_account');
  const classification = await ctx.classificationContext(dir, s);
  if (!classification.managedOuDns.some((m) => isBelow(facts.dn, m))) return refuse('not_managed');
  const sam = facts.attributes.sAMAccountName;
  const cls = classifyUser(
    { ...facts, samAccountName: Array.isArray(sam) ? sam[0] : sam, criticalSystemObject: isTrue(facts.attributes.isCriticalSystemObject) },
    classification,
  );
  if (!(cls.kind === 'standard' || (cls.kind === 'vip' && req.vipAllowed === true))) return refuse(cls.kind === 'vip' ? 'vip_not_allowed' : 'not_manageable');

  const password = generatePassword();
  try {
    await dir.setPassword(facts.dn, password, { mustChange: req.mustChange, unlock: req.unlock });
  } catch (e) {
    const code = directoryRefusalCode(e, 'password');
    if (code) return refuse(code);
    throw e;
  }
  done('succeeded');
  return { ok: true, sealed: sealResetPassword(await ctx.linkKey(), { password }, req.userGuid, req.correlationId) };
}
