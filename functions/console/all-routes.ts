// Every console route, for the OpenAPI document and the route/serverless.yml consistency test.
import { routes as adminDelegations } from './admin-delegations';
import { routes as adminRoles } from './admin-roles';
import { routes as adminSuperAdministrators } from './admin-super-administrators';
import { routes as audit } from './audit';
import { routes as auth } from './auth';
import { routes as computers } from './computers';
import { routes as fleetStatus } from './fleet-status';
import { routes as health } from './health';
import { routes as settings } from './settings';
import { routes as setup } from './setup';

export const consoleRoutes = {
  'admin-delegations': adminDelegations,
  'admin-roles': adminRoles,
  'admin-super-administrators': adminSuperAdministrators,
  audit,
  auth,
  computers,
  'fleet-status': fleetStatus,
  health,
  settings,
  setup,
};
