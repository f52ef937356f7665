import { ApiError, badRequest, conflict, isApiError } from '../errors';
import { audited, type AdminContext } from './admin';
import { changeAuthz, delegationsUsing, validateRole, type AuthzWrite, type Role } from './rights';

// `import-roles <file> [--replace]`: many roles at once with the role editor's rules, all or
// nothing (one transaction); --replace also deletes the custom roles the file does not name,
// refusing the whole import when one of them is used by a delegation.

export interface ImportSummary {
  created: string[];
  updated: string[];
  unchanged: string[];
  deleted: string[];
}

/** Validate a parsed import file: `{ roles: [{ id, name, permissions }] }`. */
export function validateImportFile(file: unknown): Role[] {
  const roles = (file as { roles?: unknown } | null)?.roles;
  if (!file || typeof file !== 'object' || Array.isArray(file) || !Array.isArray(roles)) throw badRequest('invalid_import_file', { expected: '{ "roles": [ { "id", "name", "permissions" } ] }' });
  const out: Role[] = [];
  roles.forEach((r, index) => {
    try {
      out.push(validateRole(r));
    } catch (e) {
      if (isApiError(e)) throw new ApiError(e.status, e.code, { ...e.details, index, role: (r as { id?: unknown })?.id ?? null });
      throw e;
    }
  });
  const ids = new Set<string>();
  const names = new Map<string, string>();
  for (const r of out) {
    if (ids.has(r.id)) throw badRequest('duplicate_role', { role: r.id });
    ids.add(r.id);
    const other = names.get(r.name.toLowerCase());
    if (other) throw conflict('role_name_taken', { name: r.name, role: other });
    names.set(r.name.toLowerCase(), r.id);
  }
  return out;
}

const same = (a: Role, b: Role) => a.name === b.name && a.permissions.length === b.permissions.length && a.permissions.every((p) => b.permissions.includes(p));

export function importRoles(ctx: AdminContext, file: unknown, opts: { replace: boolean }): Promise<ImportSummary> {
  return audited(ctx, 'roles.imported', { id: 'import', kind: 'roles' }, async () => {
    const roles = validateImportFile(file);
    const inFile = new Set(roles.map((r) => r.id));
    const { summary, olds } = await changeAuthz(ctx.rt.store, (s) => {
      const summary: ImportSummary = { created: [], updated: [], unchanged: [], deleted: [] };
      const olds = new Map<string, Role>();
      const writes: AuthzWrite[] = [];
      const kept = [...s.roles.values()].map((r) => r.data).filter((r) => !inFile.has(r.id) && !opts.replace);
      for (const r of roles) {
        const clash = kept.find((k) => k.name.toLowerCase() === r.name.toLowerCase());
        if (clash) throw conflict('role_name_taken', { name: r.name, role: clash.id });
        const current = s.roles.get(r.id);
        if (current && same(current.data, r)) summary.unchanged.push(r.id);
        else {
          (current ? summary.updated : summary.created).push(r.id);
          if (current) olds.set(r.id, current.data);
          writes.push({ put: 'role', value: r, version: current?.version ?? 0 });
        }
      }
      if (opts.replace) {
        for (const [id, current] of s.roles) {
          if (inFile.has(id)) continue;
          const used = delegationsUsing(s, id);
          if (used.length) throw conflict('role_in_use', { role: id, delegations: used });
          summary.deleted.push(id);
          olds.set(id, current.data);
          writes.push({ delete: 'role', id });
        }
      }
      return { writes, result: { summary, olds } };
    });
    for (const r of roles.filter((x) => summary.created.includes(x.id) || summary.updated.includes(x.id))) {
      await ctx.rt.audit.append({ event: 'roles.saved', outcome: 'success', actor: ctx.actor, target: { id: r.id, name: r.name, kind: 'role' }, correlationId: ctx.correlationId, details: { old: olds.get(r.id) ?? null, new: r, source: 'import' } });
    }
    for (const id of summary.deleted) {
      await ctx.rt.audit.append({ event: 'roles.deleted', outcome: 'success', actor: ctx.actor, target: { id, name: olds.get(id)?.name, kind: 'role' }, correlationId: ctx.correlationId, details: { old: olds.get(id), source: 'import' } });
    }
    await ctx.rt.audit.append({ event: 'roles.imported', outcome: 'success', actor: ctx.actor, target: { id: 'import', kind: 'roles' }, correlationId: ctx.correlationId, details: { replace: opts.replace, ...summary } });
    return summary;
  });
}
