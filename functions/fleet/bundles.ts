import { fleetHandler } from '@lib/fleet/http';
import { consoleBundleSchema, consoleInstanceBundle, createProxyToken, proxyTokenCreateSchema, proxyTokens, requireOperatorOfNamedClient, revokeProxyToken, tokenIdSchema } from '@lib/fleet/bundles';
import { clusterBundle, clusterBundleSchema } from '@lib/fleet/hdc';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { CLUSTER, TOKEN_REVOKE } from '@lib/api/fleet/errors';
import { errorCodes, noContent } from '@lib/http/answers';
import { z } from 'zod';

// Join tokens for new proxies: administrators only, always (spec: Levels). The console instance
// bundle: operators of the client named in the body (403 client_scope / insufficient_level).

const create = defineFleetRoute({
  method: 'POST',
  path: '/api/bundles/proxy-token',
  summary: 'A join token for a new proxy (shown once): { type?, ttlHours?, clientCode? }',
  access: 'admin',
  body: proxyTokenCreateSchema,
  responses: { 201: A.joinTokenCreated },
  errors: errorCodes(CLUSTER, { 400: ['unknown_client'] }),
  async handle(ctx) {
    return { status: 201, body: await createProxyToken(ctx.rt, ctx.body, ctx) };
  },
});

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/bundles/proxy-tokens',
  summary: "The fleet plane's join tokens in the cluster, without their secrets",
  access: 'admin',
  responses: { 200: A.joinTokens },
  errors: CLUSTER,
  async handle({ rt }) {
    return { body: await proxyTokens(rt) };
  },
});

const revoke = defineFleetRoute({
  method: 'DELETE',
  path: '/api/bundles/proxy-token/{tokenId}',
  summary: 'Revoke a join token (audited token.revoke; 502 token_revoke_failed with the manual command)',
  access: 'admin',
  params: z.object({ tokenId: tokenIdSchema }),
  responses: { 204: noContent('Revoked') },
  errors: TOKEN_REVOKE,
  async handle(ctx) {
    await revokeProxyToken(ctx.rt, ctx.params.tokenId, ctx);
    return { status: 204 };
  },
});

const consoleBundle = defineFleetRoute({
  method: 'POST',
  path: '/api/bundles/console-instance',
  summary: "A client's console instance bundle: { clientCode, host, port? } (operator of that client)",
  access: 'signed-in',
  body: consoleBundleSchema,
  responses: { 200: A.consoleBundle },
  errors: { 400: ['unknown_client'] },
  authorize: requireOperatorOfNamedClient,
  async handle(ctx) {
    return { body: await consoleInstanceBundle(ctx.rt, { ...ctx.body, clientCode: ctx.body.clientCode! }, ctx) };
  },
});

const cluster = defineFleetRoute({
  method: 'POST',
  path: '/api/bundles/cluster',
  summary: "A new client's cluster-side files: { clientCode } (its access role, its update group, the steps; administrators; audited bundle.cluster)",
  access: 'admin',
  body: clusterBundleSchema,
  responses: { 200: A.clusterBundle },
  errors: { 400: ['unknown_client'] },
  async handle(ctx) {
    return { body: await clusterBundle(ctx.rt, ctx.body.clientCode, ctx) };
  },
});

export const routes = [create, list, revoke, consoleBundle, cluster];
export const handler = fleetHandler(routes);
