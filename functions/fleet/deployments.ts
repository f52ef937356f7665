import { z } from 'zod';
import {
  checkDeploymentDesktop,
  deploymentDirectoryOutput,
  deploymentResource,
  deploymentsInScope,
  finishDeployment,
  generateDeployment,
  previewDeployment,
  requireDeploymentsClient,
  validateDeployment,
} from '@lib/fleet/deployment-flow';
import { deploymentGenerateSchema, deploymentValidateSchema, deploymentView } from '@lib/fleet/deployments';
import { fleetHandler } from '@lib/fleet/http';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';
import { CLUSTER, DEPLOYMENT_STATE, TOKEN_REVOKE } from '@lib/api/fleet/errors';
import { errorCodes } from '@lib/http/answers';

// Proxy deployments (docs/fleet.md "Proxy deployments"): administrators generate (a join token);
// operators of the deployment's client act on it; viewers see its guided-install status.
const idParams = z.object({ id: z.uuid() });
const onDeployment = { access: 'client' as const, level: 'operator' as const, params: idParams, resource: deploymentResource };

const list = defineFleetRoute({
  method: 'GET',
  path: '/api/deployment',
  summary: 'Proxy deployments of the clients in scope, newest first',
  access: 'signed-in',
  responses: { 200: A.deployments },
  async handle({ rt, access }) {
    return { body: { deployments: await deploymentsInScope(rt, access!) } };
  },
});

const generate = defineFleetRoute({
  method: 'POST',
  path: '/api/deployment/generate',
  summary: 'New proxy deployment and its join token (shown once): { clientCode, hostname, domain, ldapAddress?, ttlHours? }; administrators',
  access: 'admin',
  body: deploymentGenerateSchema,
  responses: { 201: A.deploymentGenerated },
  errors: errorCodes(CLUSTER, { 400: ['unknown_client'], 409: ['deployment_exists'] }),
  async handle(ctx) {
    return { status: 201, body: await generateDeployment(ctx.rt, ctx.body, ctx) };
  },
});

const get = defineFleetRoute({
  method: 'GET',
  path: '/api/deployment/{id}',
  summary: 'Guided-install status of one deployment (viewer of its client)',
  ...onDeployment,
  level: 'viewer',
  responses: { 200: A.deployment },
  async handle({ addressed }) {
    return { body: deploymentView(addressed!.resource) };
  },
});

const validate = defineFleetRoute({
  method: 'POST',
  path: '/api/deployment/{id}/validate',
  summary: "Check (and correct) the site facts: { hostname?, domain?, ldapAddress?, clientCode? } → { valid, problems }; a clientCode other than the deployment's is 403 client_scope",
  ...onDeployment,
  body: deploymentValidateSchema,
  authorize: requireDeploymentsClient,
  responses: { 200: A.deploymentValidated },
  errors: DEPLOYMENT_STATE,
  async handle(ctx) {
    return { body: await validateDeployment(ctx.rt, ctx.addressed!.resource, ctx.body, ctx) };
  },
});

const preview = defineFleetRoute({
  method: 'GET',
  path: '/api/deployment/{id}/preview',
  summary: "The new proxy's teleport.yaml and install commands (no token)",
  ...onDeployment,
  responses: { 200: A.deploymentPreview },
  errors: DEPLOYMENT_STATE,
  async handle(ctx) {
    return { body: previewDeployment(ctx.rt, ctx.addressed!.resource) };
  },
});

const directory = defineFleetRoute({
  method: 'POST',
  path: '/api/deployment/{id}/directory',
  summary: "Manual directory output: the domain administrator's PowerShell steps (after validation)",
  ...onDeployment,
  responses: { 200: A.deploymentDirectory },
  errors: DEPLOYMENT_STATE,
  async handle(ctx) {
    return { body: await deploymentDirectoryOutput(ctx.rt, ctx.addressed!.resource, ctx) };
  },
});

const finish = defineFleetRoute({
  method: 'POST',
  path: '/api/deployment/{id}/finish',
  summary: "The install on site is done: wait for the new proxy's desktop",
  ...onDeployment,
  responses: { 200: A.deploymentFinished },
  errors: DEPLOYMENT_STATE,
  async handle(ctx) {
    return { body: await finishDeployment(ctx.rt, ctx.addressed!.resource, ctx) };
  },
});

const desktopCheck = defineFleetRoute({
  method: 'POST',
  path: '/api/deployment/{id}/desktop-check',
  summary: "Is the new proxy's desktop seen? Then revoke the join token and complete (502 token_revoke_failed with the manual command)",
  ...onDeployment,
  responses: { 200: A.deploymentChecked },
  errors: errorCodes(DEPLOYMENT_STATE, TOKEN_REVOKE),
  async handle(ctx) {
    return { body: await checkDeploymentDesktop(ctx.rt, ctx.addressed!.resource, ctx, ctx.access!.identity.admin) };
  },
});

export const routes = [list, generate, get, validate, preview, directory, finish, desktopCheck];
export const handler = fleetHandler(routes);
