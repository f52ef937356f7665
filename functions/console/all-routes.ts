// Every console route, for the OpenAPI document and the route/serverless.yml consistency test.
import { routes as accessSettings } from './access-settings';
import { routes as adminApprovals } from './admin-approvals';
import { routes as adminBaseline } from './admin-baseline';
import { routes as adminDelegations } from './admin-delegations';
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
