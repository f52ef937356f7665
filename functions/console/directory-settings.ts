import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { consoleHandler } from '@lib/http/console';
import { defineRoute } from '@lib/http/route';
import { caPemSchema, dcUrlSchema, upnSuffixSchema } from '@lib/setup/connection';
import {
  changeAccountPassword,
  changeCa,
  changeDcs,
  changeManagedOus,
  changeUpnSuffixes,
  DIRECTORY_EVENTS,
  directoryConnectionView,
  proposeDcs,
  TECHNICAL_ACCOUNTS,
} from '@lib/setup/directory-changes';
import type { RouteContext } from '@lib/http/route';
import { accountPasswordChanged, caChanged, dcDiscovery, dcsChanged, directoryConnection, managedOusChanged, upnSuffixesChanged } from '@lib/api/console/settings';
import { errorCodes } from '@lib/http/answers';

// every change is tested against the directory, then saved under the settings' version
const CHANGE = { 409: ['settings_changed_concurrently'], 503: ['not_configured'] };

// Directory connection changes (console spec, Operating rules): settings.manage plus step-up,
// each tested against the directory before anything is stored, audited settings.directory.*.
// A refusal by the pipeline (validation, step-up) is audited under the change's own event.

const ctxOf = ({ rt, operator, sourceIp, correlationId }: RouteContext) => ({
  rt,
  actor: { id: operator!.guid, name: operator!.username, provider: operator!.provider, ip: sourceIp },
  correlationId,
});

const view = defineRoute({
  method: 'GET',
  path: '/api/settings/directory',
  summary: 'The directory connection: DCs in failover order, CA certificates (fingerprints), UPN suffixes, technical accounts (names only), managed and Tier OUs',
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: directoryConnection },
  async handle({ rt }) {
    return { body: await directoryConnectionView(rt) };
  },
});

const discovery = defineRoute({
  method: 'GET',
  path: '/api/settings/directory/discovery',
  longRead: true,
  summary: "DC discovery: _ldap._tcp.dc._msdcs.<domain> asked of the directory's own DNS (Directory:DiscoveryDnsServer, else the configured DCs); proposals only, nothing is saved",
  access: 'operator',
  permission: 'settings.manage',
  responses: { 200: dcDiscovery },
  errors: { 502: ['discovery_failed'] },
  async handle({ rt }) {
    return { body: await proposeDcs(rt) };
  },
});

const dcs = defineRoute({
  method: 'PUT',
  path: '/api/settings/directory/dcs',
  summary: 'Add, remove or reorder DCs (order = failover order); each added DC passes a TLS handshake and a read-account bind; LDAPS 636 only; audited settings.directory.dcs',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  refusalAudit: () => ({ event: DIRECTORY_EVENTS.dcs }),
  body: z.object({ dcs: z.array(z.object({ name: plainText().trim().min(1).max(64), url: dcUrlSchema })).min(1).max(20) }),
  responses: { 200: dcsChanged },
  errors: errorCodes(CHANGE, { 400: ['dc_check_failed', 'dc_duplicate', 'invalid_dc_url', 'ldaps_port_refused', 'ldaps_required', 'no_dc_reachable'] }),
  async handle(c) {
    return { body: await changeDcs(ctxOf(c), c.body.dcs) };
  },
});

const ca = defineRoute({
  method: 'PUT',
  path: '/api/settings/directory/ca',
  summary: 'Replace the CA PEM (one or more CA certificates, never a private key); every configured DC must chain to it and accept a bind; audited settings.directory.ca',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  refusalAudit: () => ({ event: DIRECTORY_EVENTS.ca }),
  body: z.object({ caPem: caPemSchema }),
  responses: { 200: caChanged },
  errors: errorCodes(CHANGE, { 400: ['ca_check_failed', 'ca_contains_private_key', 'ca_not_a_ca', 'ca_unreadable'] }),
  async handle(c) {
    return { body: await changeCa(ctxOf(c), c.body.caPem) };
  },
});

const upnSuffixes = defineRoute({
  method: 'PUT',
  path: '/api/settings/directory/upn-suffixes',
  summary: 'Replace the UPN suffixes (syntax only; removing one in use needs confirm); audited settings.directory.upn_suffixes',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  refusalAudit: () => ({ event: DIRECTORY_EVENTS.upnSuffixes }),
  body: z.object({ upnSuffixes: z.array(upnSuffixSchema).min(1).max(50), confirm: z.boolean().default(false) }),
  responses: { 200: upnSuffixesChanged },
  errors: errorCodes(CHANGE, { 400: ['upn_suffix_invalid'], 409: ['confirmation_required'], 503: ['directory_unavailable'] }),
  async handle(c) {
    return { body: await changeUpnSuffixes(ctxOf(c), c.body.upnSuffixes, c.body.confirm) };
  },
});

const accountPassword = defineRoute({
  method: 'PUT',
  path: '/api/settings/directory/accounts/{account}/password',
  summary: "A technical account's new password (read or write account): bound on every DC before saving, stored sealed, never shown again; audited settings.directory.account_password",
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  refusalAudit: ({ params }) => ({ event: DIRECTORY_EVENTS.accountPassword, target: { kind: 'technical_account', name: String(params.account ?? '') } }),
  params: z.object({ account: z.enum(TECHNICAL_ACCOUNTS) }),
  body: z.object({ password: z.string().min(1).max(256) }),
  responses: { 200: accountPasswordChanged },
  errors: errorCodes(CHANGE, { 400: ['account_bind_refused', 'no_dc_reachable'], 409: ['account_file_provided'] }),
  async handle(c) {
    return { body: await changeAccountPassword(ctxOf(c), c.params.account, c.body.password) };
  },
});

const managedOus = defineRoute({
  method: 'PUT',
  path: '/api/settings/directory/managed-ous',
  summary: 'Replace the managed OUs (DN or GUID, each an OU strictly below the domain root); removing one a delegation uses needs confirm after the impact list; audited settings.directory.managed_ous',
  access: 'operator',
  permission: 'settings.manage',
  stepUp: true,
  refusalAudit: () => ({ event: DIRECTORY_EVENTS.managedOus }),
  body: z.object({ managedOus: z.array(plainText().trim().min(1).max(1024)).min(1).max(200), confirm: z.boolean().default(false) }),
  responses: { 200: managedOusChanged },
  errors: errorCodes(CHANGE, { 400: ['not_an_ou', 'ou_in_tier', 'ou_not_below_domain_root', 'ou_not_found'], 409: ['confirmation_required'], 503: ['directory_unavailable'] }),
  async handle(c) {
    return { body: await changeManagedOus(ctxOf(c), c.body.managedOus, c.body.confirm) };
  },
});

export const routes = [view, discovery, dcs, ca, upnSuffixes, accountPassword, managedOus];
export const handler = consoleHandler(routes);
