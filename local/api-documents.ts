import { consoleDocument } from '../functions/console/openapi';
import { fleetDocument } from '../functions/fleet/openapi';

// The two OpenAPI documents as the web apps' API types are generated from (local/api-types.ts):
// the console's with every route (Helpdesk:Enabled) and no instance of its own (Production).
export const apiDocuments = () => ({ console: consoleDocument({ helpdeskEnabled: true }), fleet: fleetDocument() });

/** The console's reads bound by Concurrency:ReadBudget, by route key (the gateways' turns). */
export { readBudgetRouteKeys } from '../functions/console/all-routes';
