// Every console route, for the OpenAPI document and the route/serverless.yml consistency test.
import type { ConsoleRouteGroup } from '@lib/http/console-openapi';
import { boundByReadBudget } from '@lib/http/middlewares/admission';
import type { Route } from '@lib/http/route';
import { routes as accessSettings } from './access-settings';
import { routes as adminApprovals } from './admin-approvals';
import { routes as adminBaseline } from './admin-baseline';
import { routes as adminDelegations } from './admin-delegations';
import { routes as adminDirectory } from './admin-directory';
import { routes as adminOperators } from './admin-operators';
import { routes as adminRoles } from './admin-roles';
import { routes as adminSuperAdministrators } from './admin-super-administrators';
import { routes as approvals } from './approvals';
import { routes as audit } from './audit';
import { routes as auth } from './auth';
import { routes as computers } from './computers';
import { routes as diagnostics } from './diagnostics';
import { routes as exportsRoutes } from './exports';
import { routes as directorySettings } from './directory-settings';
import { routes as fleetStatus } from './fleet-status';
import { routes as groups } from './groups';
import { routes as health } from './health';
import { routes as settings } from './settings';
import { routes as setup } from './setup';
import { routes as users } from './users';

export const consoleRoutes = {
  'access-settings': accessSettings,
  'admin-approvals': adminApprovals,
  'admin-baseline': adminBaseline,
  'admin-delegations': adminDelegations,
  'admin-directory': adminDirectory,
  'admin-operators': adminOperators,
  'admin-roles': adminRoles,
  'admin-super-administrators': adminSuperAdministrators,
  approvals,
  audit,
  auth,
  computers,
  diagnostics,
  exports: exportsRoutes,
  'directory-settings': directorySettings,
  'fleet-status': fleetStatus,
  groups,
  health,
  settings,
  setup,
  users,
};

/** The document's tags: each group of routes (a handler file) under a name an integrator reads, in this order. */
const TAGS: Array<[keyof typeof consoleRoutes, string, string]> = [
  ['auth', 'Sign-in', 'Sessions: the anti-forgery token, directory and access-platform sign-in, step-up, the signed-in operator'],
  ['setup', 'Setup', 'First-run setup with the one-time setup token'],
  ['computers', 'Computers', 'Computers in scope and their LAPS passwords'],
  ['users', 'Users', 'Users in scope and the actions on them'],
  ['groups', 'Groups', 'Groups in scope, their members, and group management'],
  ['exports', 'Watch lists and exports', 'Watch lists and CSV exports of users'],
  ['approvals', 'Approvals', 'Approval requests: filing, approving, rejecting, cancelling, bulk jobs'],
  ['audit', 'Audit', 'The audit log and its hash chain'],
  ['settings', 'Settings', 'Step-up mode and the instance identification'],
  ['access-settings', 'Access-platform sign-in', "The access platform's sign-in settings and role mappings"],
  ['directory-settings', 'Directory connection', 'DCs, CA, UPN suffixes, technical accounts, managed OUs'],
  ['diagnostics', 'Diagnostics', 'Checks of the directory, the CA, the password service, LAPS and sign-in'],
  ['admin-roles', 'Roles', 'Console roles'],
  ['admin-delegations', 'Delegations', 'Delegations and the delegation export (rights models and scripts)'],
  ['admin-directory', 'Directory pickers', 'The OU tree and the user and group search the delegation editor picks from'],
  ['admin-super-administrators', 'Super administrators', 'Holders of the built-in Super administrator role'],
  ['admin-operators', 'Operators', "Operators' records, authenticators, the protection list and the LAPS account"],
  ['admin-approvals', 'Approval settings', 'Approval settings and notification channels'],
  ['admin-baseline', 'Baseline', 'Roles, delegations and approval settings carried between instances'],
  ['fleet-status', 'Fleet status', 'The read-only status the fleet plane polls'],
  ['health', 'Health', 'Probes for load balancers and orchestrators'],
];

/** The route groups of the OpenAPI document (the document's own route is added by functions/console/openapi.ts). */
export const consoleRouteGroups = (): ConsoleRouteGroup[] => TAGS.map(([key, tag, description]) => ({ tag, description, routes: consoleRoutes[key] }));

/**
 * The route keys ("GET /api/computers/{id}") whose answers Concurrency:ReadBudget bounds: the
 * gateways give such a read a turn only while it can still be answered within that budget
 * (lib/gateway/in-flight.ts). Read by the container's build and the local gateway at start.
 */
export const readBudgetRouteKeys = (): string[] =>
  Object.values(consoleRoutes)
    .flat()
    .flatMap((r) => ('responses' in r && boundByReadBudget(r as Route) ? [`${r.method} ${r.path}`] : []));
