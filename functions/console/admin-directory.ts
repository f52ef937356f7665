import { z } from 'zod';
import { managedOuTree, searchPrincipals } from '@lib/authz/pickers';
import { plainText } from '@lib/plain-text';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { ouTree, principalHits } from '@lib/api/console/pickers';
import { DIRECTORY_READ } from '@lib/api/console/errors';

// What the delegation editor picks from instead of typed DNs and GUIDs (issue 29): the OU tree of
// the managed OUs, and the directory's users and security groups found by name (settings.manage).

const ous = defineRoute({
  method: 'GET',
  path: '/api/admin/directory/ous',
  summary: 'The managed OUs and every OU below them (Tier 0/1 OUs left out): what a delegation scope may name, in tree order',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: ouTree },
  errors: { ...DIRECTORY_READ, 409: ['not_configured'] },
  async handle({ rt }) {
    return { body: await managedOuTree(rt) };
  },
});

const principals = defineRoute({
  method: 'GET',
  path: '/api/admin/directory/principals',
  summary: 'Users and security groups of the domain whose login, name or display name starts with q (2 characters at least; 20 at most)',
  access: 'operator',
  permission: 'settings.manage',
  query: z.object({ q: plainText().max(100).default('') }).strict(),
  responses: { 200: principalHits },
  errors: DIRECTORY_READ,
  async handle({ rt, query }) {
    return { body: await searchPrincipals(rt, query.q) };
  },
});

export const routes = [ous, principals];
export const handler = consoleHandler(routes);
