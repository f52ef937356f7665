import { badRequest, isApiError, type ApiError } from '../errors';
import { audited, type AdminContext } from './admin';
import { changeAuthz, ID_PATTERN, validateRole, type AuthzState, type AuthzWrite, type Role } from './rights';

// `import-roles <file> [--replace]` (decision 23): every role of the file is checked on its own
// with the role editor's rules; the valid ones are written together (one transaction on the
// authorization revision), each refused one is reported with its index and code. An existing
// role is never overwritten without --replace (`role_exists`); --replace overwrites the roles the
// file names and nothing else: no role is ever deleted by an import.

export interface RefusedRole {
  index: number;
  /** the role's id when it is a well-formed one (never an arbitrary value of the file) */
  id: string | null;
  code: string;
  details?: Record<string, unknown>;
}

export interface ImportSummary {
  created: string[];
  updated: string[];
  unchanged: string[];
  refused: RefusedRole[];
}

const wellFormedId = (r: unknown) => {
  const id = (r as { id?: unknown } | null)?.id;
  return typeof id === 'string' && ID_PATTERN.test(id) ? id : null;
};

/** The file's shape: `{ roles: [...] }` (anything else refuses the whole file). */
export function rolesOfFile(file: unknown): unknown[] {
  const roles = (file as { roles?: unknown } | null)?.roles;
  if (!file || typeof file !== 'object' || Array.isArray(file) || !Array.isArray(roles)) throw badRequest('invalid_import_file', { expected: '{ "roles": [ { "id", "name", "permissions" } ] }' });
  return roles;
}

/** Each entry validated on its own: the valid roles (first of each id) and the refused entries. */
export function validateImportFile(file: unknown): { valid: Array<{ index: number; role: Role }>; refused: RefusedRole[] } {
  const valid: Array<{ index: number; role: Role }> = [];
  const refused: RefusedRole[] = [];
  const ids = new Set<string>();
  rolesOfFile(file).forEach((r, index) => {
    try {
      const role = validateRole(r);
      if (ids.has(role.id)) throw badRequest('duplicate_role', {});
      ids.add(role.id);
      valid.push({ index, role });
    } catch (e) {
      if (!isApiError(e)) throw e;
      refused.push(refusal(index, wellFormedId(r), e));
    }
  });
  return { valid, refused };
}

// validation details name fields and codes, never the rejected values
const refusal = (index: number, id: string | null, e: ApiError): RefusedRole => ({ index, id, code: e.code, ...(Object.keys(e.details).length ? { details: e.details } : {}) });

const same = (a: Role, b: Role) => a.name === b.name && a.permissions.length === b.permissions.length && a.permissions.every((p) => b.permissions.includes(p));
const lower = (s: string) => s.toLowerCase();

/**
 * What an import writes on this state (pure): existing roles only with --replace (an identical
 * one is unchanged), names unique among the roles kept and the roles accepted.
 */
export function planImport(s: AuthzState, checked: ReturnType<typeof validateImportFile>, replace: boolean) {
  const refused = [...checked.refused];
  let candidates = checked.valid.filter(({ index, role }) => {
    const current = s.roles.get(role.id);
    if (!current || replace || same(current.data, role)) return true;
    refused.push({ index, id: role.id, code: 'role_exists' });
    return false;
  });
  // a refused candidate leaves its stored role in place, which may clash with one accepted
  // before it: decide the names again until nothing changes
  for (let changed = true; changed; ) {
    changed = false;
    const taken = new Map<string, string>();
    for (const [id, r] of s.roles) if (!candidates.some((c) => c.role.id === id)) taken.set(lower(r.data.name), id);
    for (const c of candidates) {
      const other = taken.get(lower(c.role.name));
      if (other !== undefined && other !== c.role.id) {
        refused.push({ index: c.index, id: c.role.id, code: 'role_name_taken', details: { name: c.role.name, role: other } });
        candidates = candidates.filter((x) => x !== c);
        changed = true;
        break;
      }
      taken.set(lower(c.role.name), c.role.id);
    }
  }
  const summary: ImportSummary = { created: [], updated: [], unchanged: [], refused: refused.sort((a, b) => a.index - b.index) };
  const olds = new Map<string, Role>();
  const writes: AuthzWrite[] = [];
  const written: Role[] = [];
  for (const { role } of candidates) {
    const current = s.roles.get(role.id);
    if (current && same(current.data, role)) {
      summary.unchanged.push(role.id);
      continue;
    }
    (current ? summary.updated : summary.created).push(role.id);
    if (current) olds.set(role.id, current.data);
    writes.push({ put: 'role', value: role, version: current?.version ?? 0 });
    written.push(role);
  }
  return { writes, result: { summary, olds, written } };
}

export function importRoles(ctx: AdminContext, file: unknown, opts: { replace: boolean }): Promise<ImportSummary> {
  return audited(ctx, 'roles.imported', { id: 'import', kind: 'roles' }, async () => {
    const checked = validateImportFile(file);
    const { summary, olds, written } = await changeAuthz(ctx.rt.store, (s) => planImport(s, checked, opts.replace));
    for (const r of written) {
      await ctx.rt.audit.append({ event: 'roles.saved', outcome: 'success', actor: ctx.actor, target: { id: r.id, name: r.name, kind: 'role' }, correlationId: ctx.correlationId, details: { old: olds.get(r.id) ?? null, new: r, source: 'import' } });
    }
    for (const r of summary.refused) {
      await ctx.rt.audit.append({ event: 'roles.saved', outcome: 'denied', reason: r.code, actor: ctx.actor, target: { id: r.id ?? `import[${r.index}]`, kind: 'role' }, correlationId: ctx.correlationId, details: { ...r.details, source: 'import', index: r.index } });
    }
    const outcome = !summary.refused.length ? 'success' : written.length || summary.unchanged.length ? 'partial' : 'denied';
    await ctx.rt.audit.append({
      event: 'roles.imported',
      outcome,
      reason: summary.refused.length ? 'roles_refused' : undefined,
      actor: ctx.actor,
      target: { id: 'import', kind: 'roles' },
      correlationId: ctx.correlationId,
      details: { replace: opts.replace, created: summary.created, updated: summary.updated, unchanged: summary.unchanged, refused: summary.refused.length },
    });
    return summary;
  });
}
