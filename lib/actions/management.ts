import { plainText } from '../plain-text';
import { decideOn, type Actor, type Decision, type DecisionContext } from '../authz/engine';
import { directoryApiError, isDirectoryError, isGuid } from '../directory';
import { ApiError, notFound } from '../errors';
import { auditActor, nameOf, refusalError } from './common';

// Moves, renames and groups (console spec, "Moves, renames and groups"; work without the password
// service). Each is decided by the one engine on fresh facts read by GUID (audited
// `authz.decision`), refused or executed with the write account, and audited under its own name
// (`users.move`, `users.rename`, `users.rename.login`, `groups.create`, `groups.delete`,
// `groups.attributes.write`) with old and new values. Never approvable: they run directly or not.
// This module holds what they share: names, DN helpers, the decision, audit and failure steps;
// user-management.ts the users' moves and renames, group-management.ts the groups'.

/** The ticket of a management request (optional: the approval settings may require one elsewhere). */
export const ticketField = plainText().trim().max(200).optional();

/** The options of one management request: its correlation id, and its ticket when one was given. */
export const managementOptions = (correlationId: string, ticket?: string): ManagementOptions => ({ correlationId, ticket: ticket || undefined });

export interface ManagementOptions {
  correlationId: string;
  ticket?: string;
}

export interface ManagementResult {
  outcome: 'succeeded' | 'partial';
  id?: string;
  dn?: string;
  code?: string;
}

// ---- names: what the directory would refuse or mangle is refused first (400)
/** sAMAccountName: at most 20 characters (user logon name, pre-Windows 2000), none of "/\[]:;|=,+*?<>@, no final dot. */
export const samAccountNameSchema = plainText()
  .trim()
  .min(1)
  .max(20)
  .refine((s) => !/["/\\[\]:;|=,+*?<>@]/.test(s) && !s.endsWith('.'), 'characters a sAMAccountName cannot hold');
export const groupSamSchema = plainText()
  .trim()
  .min(1)
  .max(64)
  .refine((s) => !/["/\\[\]:;|=,+*?<>@]/.test(s) && !s.endsWith('.'), 'characters a group name cannot hold');
/** cn: at most 64 characters, no control characters and no backslash (the RDN is escaped, never a backslash sequence). */
export const cnSchema = plainText()
  .trim()
  .min(1)
  .max(64)
  .refine((s) => !s.includes('\\'), 'characters a name cannot hold');
export const upnSchema = plainText()
  .trim()
  .max(256)
  .regex(/^[^\s@"\\]{1,64}@[A-Za-z0-9.-]{1,190}$/, 'name@suffix');
export const optionalText = (max: number) => plainText().trim().max(max).nullable().optional();

/** An RDN value escaped for a DN (RFC 4514). */
export function escapeRdnValue(v: string): string {
  let s = v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
  if (s.startsWith('#') || s.startsWith(' ')) s = `\\${s}`;
  if (s.endsWith(' ')) s = `${s.slice(0, -1)}\\ `;
  return s;
}
/** The first RDN of a DN (up to its first unescaped comma), and the parent DN. */
export function splitDn(dn: string): { rdn: string; parent: string } {
  for (let i = 0; i < dn.length; i++) {
    if (dn[i] === '\\') i++;
    else if (dn[i] === ',') return { rdn: dn.slice(0, i), parent: dn.slice(i + 1) };
  }
  return { rdn: dn, parent: '' };
}

export const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v) ?? null;
export const isWriteDenied = (e: unknown) => isDirectoryError(e, 'denied');

/** The audit row of one management action (refusals included), with the ticket and the correlation id. */
export function auditRow(ctx: DecisionContext, actor: Actor, event: string, kind: 'user' | 'group' | 'ou', opts: ManagementOptions) {
  return (outcome: string, reason: string, target: { id?: string; dn?: string; name?: string }, details?: Record<string, unknown>) =>
    ctx.rt.audit.append({ event, outcome, reason, ticket: opts.ticket, actor: auditActor(actor), target: { kind, ...target }, correlationId: opts.correlationId, details });
}

/** Decide on the target (audited), or audit the refusal under the action's name and throw it. */
export async function decided(ctx: DecisionContext, actor: Actor, kind: 'user' | 'group', action: Parameters<typeof decideOn>[3], guid: string, opts: ManagementOptions, audit: ReturnType<typeof auditRow>) {
  if (!isGuid(guid)) {
    await audit('denied', 'not_found', { id: guid });
    throw notFound();
  }
  const d = await decideOn(ctx, actor, kind, action, guid, { audit: true, correlationId: opts.correlationId });
  if (!d.allowed) {
    const error = refusalError(d);
    await audit('denied', error.code === 'forbidden' ? d.reason : error.code, targetOf(guid, d));
    throw error;
  }
  return d;
}
export const targetOf = (guid: string, d: Decision) => ({ id: guid, ...(d.target ? { dn: d.target.dn, name: nameOf(d) } : {}) });

/** A directory failure of a write: audited as failed (or unknown), thrown as the API's error. */
export async function failed(e: unknown, audit: ReturnType<typeof auditRow>, target: { id?: string; dn?: string; name?: string }, details: Record<string, unknown>, mapped?: ApiError): Promise<never> {
  const error = mapped ?? directoryApiError(e);
  await audit(error.code === 'directory_outcome_unknown' ? 'unknown' : 'failed', error.code, target, details);
  throw error;
}


/** A destination given as a DN: the GUID of the OU there (undefined: no OU answers to it). */
export async function destinationGuid(ctx: DecisionContext, ref: string): Promise<string | undefined> {
  const dn = await ctx.dir.filterOuDn(ref);
  return dn ? (await ctx.dir.readFactsByDn(dn, ['objectGUID']))?.guid : undefined;
}
