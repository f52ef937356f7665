import { z } from 'zod';
import { stringify } from 'yaml';
import { ApiError, notFound } from '../errors';
import { clientCodeSchema } from './clients';
import { addJoinToken, findJoinToken, JOIN_TOKEN_TYPES, joinTokenTtlSchema, listFleetJoinTokens, revokeJoinToken, TokenRevokeFailed } from './join-tokens';
import { hasLevel } from './guard';
import { requireRegisteredClient, type Acting } from './register';
import type { FleetContext } from './route';
import type { FleetRuntime } from './runtime';

// Bundles handed to the people who install things: join tokens for new proxies
// (/api/bundles/proxy-token*, administrators only, always: a token's labels do not bind the agent
// that uses it, spec: Levels) and a client's console instance bundle (operators of the client).

export const proxyTokenCreateSchema = z.object({
  type: z.enum(JOIN_TOKEN_TYPES).default('windowsdesktop'),
  ttlHours: joinTokenTtlSchema,
  /** labels the token with the client (informative: it binds nothing) */
  clientCode: clientCodeSchema.optional(),
});
export type ProxyTokenCreate = z.output<typeof proxyTokenCreateSchema>;
export const tokenIdSchema = z.string().regex(/^[0-9a-f]{24}$/);

const tokenTarget = (tokenId: string) => ({ id: tokenId, kind: 'token' });

export async function createProxyToken(rt: FleetRuntime, input: ProxyTokenCreate, by: Acting) {
  if (input.clientCode) await requireRegisteredClient(rt, input.clientCode);
  const base = { event: 'token.create', actor: by.actor, correlationId: by.correlationId, ...(input.clientCode ? { client: input.clientCode } : {}) };
  let issued;
  try {
    issued = await addJoinToken(rt.cli, { type: input.type, ttlHours: input.ttlHours, labels: input.clientCode ? { client_code: input.clientCode } : {} });
  } catch (e) {
    await rt.audit.append({ ...base, outcome: 'error', reason: e instanceof ApiError ? e.code : 'internal_error', details: { type: input.type } });
    throw e;
  }
  await rt.audit.append({ ...base, outcome: 'success', target: tokenTarget(issued.tokenId), details: { type: input.type, ttlHours: input.ttlHours, expires: issued.expires } });
  return { token: issued.token, tokenId: issued.tokenId, expires: issued.expires, roles: issued.roles, type: input.type, clientCode: input.clientCode ?? null };
}

export const proxyTokens = async (rt: FleetRuntime) => ({ tokens: await listFleetJoinTokens(rt.cli) });

/** Revoke one of the fleet plane's tokens by its id (404 when the cluster lists no such token). */
export async function revokeProxyToken(rt: FleetRuntime, tokenId: string, by: Acting) {
  const found = await findJoinToken(rt.cli, tokenId);
  if (!found) throw notFound();
  const base = { event: 'token.revoke', actor: by.actor, correlationId: by.correlationId, target: tokenTarget(tokenId), ...(found.clientCode ? { client: found.clientCode } : {}) };
  const r = await revokeJoinToken(rt.cli, tokenId, `fleet-managed=true, expiring ${found.expires ?? 'never'}`);
  if (!r.revoked) {
    await rt.audit.append({ ...base, outcome: 'error', reason: r.cause });
    throw new TokenRevokeFailed(r.cause, { tokenId, expires: found.expires, manualCommand: r.manualCommand(true) });
  }
  await rt.audit.append({ ...base, outcome: 'ok', ...(r.alreadyGone ? { details: { alreadyGone: true } } : {}) });
}

// ---- console instance bundle ----

const hostName = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/, 'a fully qualified host name');

export const consoleBundleSchema = z.object({
  /** required: a bundle without its client is refused by the guard (403 client_scope, spec: Server-side enforcement 4) */
  clientCode: clientCodeSchema.optional(),
  /** the console's host name at the client (its own TLS name) */
  host: hostName,
  /** the console's HTTPS port on that host */
  port: z.number().int().min(1).max(65535).default(443),
});
export type ConsoleBundleInput = z.output<typeof consoleBundleSchema>;

/**
 * What installing a client's console needs from the MSP: the access platform's application
 * `<code>-hdc` labelled with the client (so `fleet-client-<code>` roles reach it, spec: per-client
 * access role), and the registration facts for the fleet plane. No secret: the console's status
 * token is created on the console and given to an administrator who registers it.
 */
export async function consoleInstanceBundle(rt: FleetRuntime, input: ConsoleBundleInput & { clientCode: string }, by: Acting) {
  await requireRegisteredClient(rt, input.clientCode);
  const appName = `${input.clientCode}-hdc`;
  const origin = `https://${input.host}${input.port === 443 ? '' : `:${input.port}`}`;
  const appService = {
    app_service: {
      enabled: true,
      apps: [{ name: appName, uri: origin, public_addr: '', labels: { client_code: input.clientCode }, rewrite: { headers: [] as string[] } }],
    },
  };
  await rt.audit.append({ event: 'bundle.console_instance', outcome: 'success', actor: by.actor, client: input.clientCode, correlationId: by.correlationId, target: { id: appName, name: origin, kind: 'console-bundle' } });
  return {
    clientCode: input.clientCode,
    appName,
    consoleUrl: origin,
    files: [
      { path: 'teleport-app.yaml', content: `# add to the teleport.yaml of the agent that publishes the console\n${stringify(appService)}` },
      {
        path: 'README.md',
        content: [
          `# Console of ${input.clientCode}`,
          '',
          `1. Install the console on ${input.host} with the installer (\`--name ${input.host}\`, \`--public-url ${origin}\`, \`--teleport-local auto\` when the access platform agent runs on the same server).`,
          `2. Publish it through the access platform: merge teleport-app.yaml into that agent's configuration; technicians of ${input.clientCode} reach it as \`${appName}\`.`,
          `3. On the console, create the fleet status token; an MSP administrator registers the console in the fleet plane (URL ${origin}, CA if private, that token).`,
          '',
        ].join('\n'),
      },
    ],
  };
}

/**
 * An action naming its client in the body (spec: Server-side enforcement 4, 5): operator level on
 * it; a visible client at viewer level is 403 insufficient_level, any other 403 client_scope, and
 * so is a body that names no client (a client that cannot be determined is refused), for
 * administrators too.
 */
export async function requireOperatorOfNamedClient(ctx: FleetContext<{ clientCode?: string }>): Promise<void> {
  const code = ctx.body.clientCode;
  if (code === undefined) return ctx.refuse('client_scope', 'operator', null);
  if (hasLevel(ctx, code, 'operator')) return;
  await ctx.refuse(ctx.access!.levelOn(code) === undefined ? 'client_scope' : 'insufficient_level', 'operator', code);
}
