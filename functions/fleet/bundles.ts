import { fleetHandler } from '@lib/fleet/http';
import { consoleBundleSchema, consoleInstanceBundle, createProxyToken, proxyTokenCreateSchema, proxyTokens, requireOperatorOfNamedClient, revokeProxyToken, tokenIdSchema, type ConsoleBundleInput, type ProxyTokenCreate } from '@lib/fleet/bundles';
import { defineFleetRoute } from '@lib/fleet/route';
import { z } from 'zod';

// Join tokens for new proxies: administrators only, always (spec: Levels). The console instance
// bundle: operators of the client named in the body (403 client_scope / insufficient_level).

const create = defineFleetRoute<ProxyTokenCreate>({
  method: 'POST',
  path: '/api/bundles/proxy-token',
  summary: 'A join token for a new proxy (shown once): { type?, ttlHours?, clientCode? }',
  access: 'admin',
  body: proxyTokenCreateSchema,
  async handle(ctx) {
    return { status: 201, body: await createProxyToken(ctx.rt, ctx.body, ctx) };
  },
});

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/bundles/proxy-tokens',
  summary: "The fleet plane's join tokens in the cluster, without their secrets",
  access: 'admin',
  async handle({ rt }) {
    return { body: await proxyTokens(rt) };
  },
});

const revoke = defineFleetRoute<undefined, undefined, { tokenId: string }>({
  method: 'DELETE',
  path: '/api/bundles/proxy-token/{tokenId}',
  summary: 'Revoke a join token (audited token.revoke; 502 token_revoke_failed with the manual command)',
  access: 'admin',
  params: z.object({ tokenId: tokenIdSchema }),
  async handle(ctx) {
    await revokeProxyToken(ctx.rt, ctx.params.tokenId, ctx);
    return { status: 204 };
  },
});

const consoleBundle = defineFleetRoute<ConsoleBundleInput>({
  method: 'POST',
  path: '/api/bundles/console-instance',
  summary: "A client's console instance bundle: { clientCode, host, port? } (operator of that client)",
  access: 'signed-in',
  body: consoleBundleSchema,
  authorize: requireOperatorOfNamedClient,
  async handle(ctx) {
    return { body: await consoleInstanceBundle(ctx.rt, { ...ctx.body, clientCode: ctx.body.clientCode! }, ctx) };
  },
});

export const routes = [create, list, revoke, consoleBundle];
export const handler = fleetHandler(routes);
