import { z } from 'zod';

// What the delegation editor picks from (issue 29, lib/authz/pickers.ts): the OU tree of the
// managed OUs and a search of the directory's users and security groups.

export const ouTree = z
  .object({
    ous: z.array(z.object({ guid: z.string(), dn: z.string(), name: z.string(), path: z.string(), depth: z.number() }).meta({ id: 'OuNode', description: 'An OU a scope may name; path: the names from its managed OU down' })),
    truncated: z.boolean(),
  })
  .meta({ id: 'OuTree' });

export const principalHits = z
  .object({
    items: z.array(
      z
        .object({ kind: z.enum(['user', 'group']), guid: z.string(), name: z.string(), displayName: z.string().nullable(), where: z.string() })
        .meta({ id: 'PrincipalHit', description: 'A user or a security group: name is its sAMAccountName, where its OU path' }),
    ),
    truncated: z.boolean(),
  })
  .meta({ id: 'PrincipalHits' });
