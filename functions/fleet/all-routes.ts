// Every fleet route, for the guard table test and the route/serverless.fleet.yml consistency test.
import { routes as access } from './access';
import { routes as alerts } from './alerts';
import { routes as audit } from './audit';
import { routes as bundles } from './bundles';
import { routes as auth } from './auth';
import { routes as clients } from './clients';
import { routes as consoles } from './consoles';
import { routes as consoleStatus } from './console-status';
import { routes as deployments } from './deployments';
import { routes as health } from './health';
import { routes as nodes } from './nodes';
import { routes as technicians } from './technicians';
import { routes as upgrades } from './upgrades';

export const fleetRoutes = { access, alerts, audit, auth, bundles, clients, consoles, 'console-status': consoleStatus, deployments, health, nodes, technicians, upgrades };
