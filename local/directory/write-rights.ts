import { PERMISSIONS } from '../../lib/authz/permissions';
import { rightKey, WRITE_RIGHTS, type ModelRight } from '../../lib/delegation/model';
import { rightSddl } from '../../lib/delegation/script';

// The write account's rights on a managed OU where every delegable action is delegated (what the
// delegation export gives the seeded directory's Super administrator scope), one SDDL ACE a line
// with lDAPDisplayNames for GUIDs and `W` for the account: dc.sh resolves them and grants them
// with samba-tool dsacl, so the local directory holds exactly the exported model.
const rights = new Map<string, ModelRight>();
for (const p of PERMISSIONS) for (const r of WRITE_RIGHTS[p] ?? []) rights.set(rightKey(r), r);
process.stdout.write([...rights.values()].map((r) => `${rightSddl(r, 'W')}\n`).join(''));
