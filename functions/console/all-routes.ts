// Every console route, for the OpenAPI document and the route/serverless.yml consistency test.
import { routes as audit } from './audit';
import { routes as auth } from './auth';
import { routes as fleetStatus } from './fleet-status';
import { routes as health } from './health';
import { routes as settings } from './settings';
import { routes as setup } from './setup';

export const consoleRoutes = { audit, auth, 'fleet-status': fleetStatus, health, settings, setup };
