import { classifyComputer, currentClassification, isBelow } from '../authz/classify';
import { listDelegations, listRoles } from '../authz/rights';
import { parentDn } from '../computers';
import type { Directory } from '../directory';
import { COMPUTER_ATTRIBUTES } from '../directory/objects';
import { callPasswordService } from '../password-service/console-side/client';
import type { ConsoleRuntime } from '../runtime';
import { protectedGroupSidsOf, readSettings } from '../setup/settings';
import { firstValue, RECOVERY_CLASS, RECOVERY_PASSWORD_ATTRIBUTE } from './entries';

// The BitLocker checks of the diagnostics (issue 33), the way the LAPS rights are checked: per
// scope of a delegation holding computers.bitlocker.read, one sample recovery entry below a standard
// computer, found with the console's read account (which lists entries: key id, volume, date).
// The console's account must NOT be able to read the key there; the BitLocker account must
// (checked by the password service, attribute names only: the key is never fetched).

export interface BitlockerDiagnostics {
  checks: string[];
  scopes: Array<{ scope: string; sample?: string; checks: string[] }>;
}

const MAX_SAMPLES = 50;

/** The first recovery entry (by name) below a standard computer of the scope, as the read account sees it. */
async function sampleEntry(dir: Directory, scope: string, isStandard: (computerDn: string) => Promise<boolean>): Promise<{ dn: string; computer: string } | undefined> {
  const found = await dir.search({ base: scope, filter: `(objectClass=${RECOVERY_CLASS})`, attributes: ['objectGUID', 'cn'], max: MAX_SAMPLES });
  const byName = [...found.entries].sort((a, b) => (firstValue(a.attributes.cn) ?? '').localeCompare(firstValue(b.attributes.cn) ?? ''));
  for (const e of byName) {
    const computer = parentDn(e.dn);
    if (await isStandard(computer)) return { dn: e.dn, computer };
  }
  return undefined;
}

export async function bitlockerDiagnostics(rt: ConsoleRuntime): Promise<BitlockerDiagnostics> {
  const [roles, delegations] = await Promise.all([listRoles(rt.store), listDelegations(rt.store)]);
  const holding = new Set(roles.filter((r) => r.permissions.includes('computers.bitlocker.read')).map((r) => r.id));
  const delegated = delegations.filter((d) => holding.has(d.roleId));
  // nothing delegated: nothing to check (the Super administrator's role alone names no scope here)
  if (!delegated.length) return { checks: [], scopes: [] };
  if (!rt.config.Helpdesk.Enabled) return { checks: ['bitlocker_needs_password_service'], scopes: [] };
  const rec = await readSettings(rt.store);
  if (!rec) return { checks: [], scopes: [] };
  const s = rec.settings;
  const dir = await rt.directory();
  const ctx = await currentClassification(s, protectedGroupSidsOf(s), (o) => dir.dnOfGuid(o.guid));
  const isStandard = async (dn: string) => {
    const facts = await dir.readFactsByDn(dn, COMPUTER_ATTRIBUTES);
    if (!facts) return false;
    const [f] = await dir.withTokenGroups([facts]);
    return classifyComputer(f, ctx).kind === 'standard' && ctx.managedOuDns.some((m) => isBelow(f.dn, m));
  };
  const scopeDns = [...new Set((await Promise.all(delegated.flatMap((d) => d.scope.map(async (o) => (await dir.dnOfGuid(o.guid)) ?? o.dn)))).filter(Boolean))];

  const scopes: BitlockerDiagnostics['scopes'] = [];
  const samples: Array<{ scope: string; dn: string }> = [];
  for (const scope of scopeDns.slice(0, 50)) {
    const sample = await sampleEntry(dir, scope, isStandard);
    if (!sample) {
      scopes.push({ scope, checks: ['no_bitlocker_sample'] });
      continue;
    }
    // the console's read account lists the entry but must never read its key
    const readable = await dir.readableAttributeNames(sample.dn);
    const consoleCheck = readable.has(RECOVERY_PASSWORD_ATTRIBUTE.toLowerCase()) ? 'bitlocker_console_reads_key' : 'bitlocker_console_key_hidden';
    scopes.push({ scope, sample: firstValue((await dir.readAttributes(sample.computer, ['cn']))?.cn) ?? sample.computer, checks: [consoleCheck] });
    samples.push({ scope, dn: sample.dn });
  }

  let res;
  try {
    res = await callPasswordService({ op: 'bitlocker.diagnose', samples });
  } catch {
    return { checks: ['bitlocker_service_unreachable'], scopes };
  }
  if (!res.ok) return { checks: ['bitlocker_service_unreachable'], scopes };
  const byScope = new Map((res.scopes ?? []).map((x) => [x.scope, x.checks]));
  for (const sc of scopes) sc.checks.push(...(byScope.get(sc.scope) ?? []));
  return { checks: [res.identity ?? 'bitlocker_identity_not_configured'], scopes };
}
