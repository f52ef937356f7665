// Every fleet route, for the guard table test and the route/serverless.fleet.yml consistency test.
import type { FleetRouteGroup } from '@lib/fleet/openapi';
import { routes as access } from './access';
import { routes as alerts } from './alerts';
import { routes as audit } from './audit';
import { routes as bundles } from './bundles';
import { routes as auth } from './auth';
import { routes as clients } from './clients';
import { routes as consoles } from './consoles';
import { routes as consoleStatus } from './console-status';
import { routes as deployments } from './deployments';
import { routes as hdc } from './hdc';
import { routes as health } from './health';
import { routes as nodes } from './nodes';
import { routes as technicians } from './technicians';
import { routes as upgrades } from './upgrades';

export const fleetRoutes = { access, alerts, audit, auth, bundles, clients, consoles, 'console-status': consoleStatus, deployments, hdc, health, nodes, technicians, upgrades };

/** The document's tags: each group of routes (a handler file) under a name an integrator reads, in this order. */
const TAGS: Array<[keyof typeof fleetRoutes, string, string]> = [
  ['auth', 'Sign-in', "The local administrator's sign-in and the caller"],
  ['nodes', 'Proxies', 'Proxies in scope, their desktops, locks and the inventory CSV'],
  ['access', 'Access platform', 'Windows desktop gateways and agent auto-update (read-only)'],
  ['alerts', 'Alerts', 'Alerts, acknowledgements, silences, alert settings and channels'],
  ['clients', 'Clients', "The client register and each client's access role"],
  ['consoles', 'Consoles', "Clients' consoles as registered"],
  ['console-status', 'Console polls', "A console's last poll, and polling it now"],
  ['technicians', 'Technicians', 'Technician assignments'],
  ['bundles', 'Join tokens and bundles', "Join tokens for new proxies, a client's console instance bundle and its cluster bundle"],
  ['deployments', 'Deployments', 'Guided proxy deployments'],
  ['hdc', 'Console integration', "Each console's registration as the fleet plane polls it (administrators)"],
  ['upgrades', 'Upgrades', 'Console upgrades: target, plans, packs'],
  ['audit', 'Audit', "The fleet plane's audit log and its hash chain"],
  ['health', 'Health', 'The probe for load balancers and orchestrators'],
];

/** The route groups of the OpenAPI document (the document's own route is added by functions/fleet/openapi.ts). */
export const fleetRouteGroups = (): FleetRouteGroup[] => TAGS.map(([key, tag, description]) => ({ tag, description, routes: fleetRoutes[key] }));
