import { z } from 'zod';
import { groupMembersResultSchema } from '../../actions/group-members';
import { computerViewSchema } from '../../computers';
import { groupViewSchema } from '../../groups';
import { signInFactsSchema, userGroupSchema, userViewSchema } from '../../users';

// The console's answers about directory objects: computers, users, groups, watch lists, and the
// outcomes of the actions on them (the read views are lib's own schemas, named here).

export const computerView = computerViewSchema.meta({ id: 'ComputerView', description: 'A computer the operator may read' });
export const userView = userViewSchema.meta({ id: 'UserView', description: 'A user the operator may read (never a password)' });
export const groupView = groupViewSchema.meta({ id: 'GroupView', description: 'A group the operator may read' });

/** What the operator may do on an object now: directly, only with an approval, or not (hints; every action is decided again). */
export const actionHint = z.enum(['direct', 'approval', 'no']).meta({ id: 'ActionHint' });

/** A bounded page of a scoped list: `truncated` with a cursor for the next page; `incomplete` when the directory stopped early. */
const page = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item), truncated: z.boolean(), incomplete: z.boolean(), cursor: z.string().optional() });

export const computerPage = page(computerView).meta({ id: 'ComputerPage' });
export const userPage = page(userView).meta({ id: 'UserPage' });
export const groupPage = page(groupView).meta({ id: 'GroupPage' });

export const computerDetail = computerViewSchema
  .extend({ actions: z.object({ revealLaps: z.boolean(), expireLaps: z.boolean(), revealBitlocker: z.boolean() }) })
  .meta({ id: 'ComputerDetail' });
/** Sign-in facts: the lockout (replicated), the bad-password count and time as kept by the DC named in `dc` (each DC counts its own). */
export const userSignIn = signInFactsSchema.meta({ id: 'UserSignIn' });
export const userDetail = userViewSchema
  .extend({ dn: z.string(), cn: z.string().nullable(), signIn: userSignIn, groups: z.array(userGroupSchema), actions: z.record(z.string(), actionHint) })
  .meta({ id: 'UserDetail' });
export const groupDetail = groupViewSchema.extend({ dn: z.string(), managedBy: z.string().nullable(), info: z.string().nullable(), actions: z.record(z.string(), actionHint) }).meta({ id: 'GroupDetail' });

export const memberView = z
  .object({ id: z.string(), kind: z.enum(['user', 'group', 'computer']), name: z.string(), displayName: z.string().nullable(), managed: z.boolean(), protected: z.boolean() })
  .meta({ id: 'MemberView' });
export const groupMembersPage = z
  .object({
    items: z.array(memberView),
    /** never-manageable members: counted, never named */
    omitted: z.number(),
    truncated: z.boolean(),
    count: z.number(),
    /** the token DELETE /api/groups/{id} takes as confirmMembers */
    confirmMembers: z.string().optional(),
  })
  .meta({ id: 'GroupMembers' });

export const lapsPassword = z
  .object({ account: z.string(), password: z.string(), updatedUtc: z.string().nullable(), expiresUtc: z.string().nullable(), source: z.enum(['windows', 'legacy']) })
  .meta({ id: 'LapsPassword', description: 'The LAPS password, shown once' });
export const lapsExpired = z.object({ expired: z.literal(true) });
export const bitlockerPassword = z
  .object({ keyId: z.string(), volumeGuid: z.string().nullable(), recoveryPassword: z.string(), date: z.string().nullable() })
  .meta({ id: 'BitlockerRecoveryPassword', description: 'One BitLocker recovery password (48 digits in 8 groups of 6), shown once' });

/** An approvable action done (partial: some of a group change failed, see members). */
export const actionOutcome = z.object({ outcome: z.enum(['succeeded', 'partial']), code: z.string().optional() }).meta({ id: 'ActionOutcome' });
export const passwordReset = actionOutcome.extend({ password: z.string() }).meta({ id: 'PasswordReset', description: 'The generated password, shown once' });
export const groupMembersResult = groupMembersResultSchema.extend({ code: z.string().optional() }).meta({ id: 'GroupMembersResult' });
/** A move, rename or group change (never approvable). */
export const managementResult = z
  .object({ outcome: z.enum(['succeeded', 'partial']), id: z.string().optional(), dn: z.string().optional(), code: z.string().optional() })
  .meta({ id: 'ManagementResult' });

const watchListTitle = z.enum(['Locked out', 'Disabled accounts', 'Password never expires', 'No sign-in for 90 days']);
export const watchLists = z.object({ lists: z.array(z.object({ id: z.string(), title: watchListTitle })) });
export const watchList = z.object({ id: z.string(), title: watchListTitle, items: z.array(userView), truncated: z.boolean(), incomplete: z.boolean() }).meta({ id: 'WatchList' });

/** A CSV export's headers. */
export const csvHeaders = {
  'Content-Disposition': { description: 'attachment; filename="…csv"', required: true },
  'X-Row-Count': { description: 'the number of rows in the file', required: true },
};
