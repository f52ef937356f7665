import { z } from 'zod';
import { consoleHandler } from '@lib/http/console';
import { consoleOpenApiDocument } from '@lib/http/console-openapi';
import type { OpenApiDocument } from '@lib/http/openapi';
import { defineRoute, type Route } from '@lib/http/route';
import { consoleRouteGroups } from './all-routes';
import pkg from '../../package.json';

// The document describes itself too: an OpenAPI 3.1 object
const openApiObject = z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }).meta({ id: 'OpenApiDocument' });

const document: Route<undefined, undefined, undefined, { 200: typeof openApiObject }> = defineRoute({
  method: 'GET',
  path: '/openapi/v1.json',
  summary: 'OpenAPI 3.1 description of this API (development: anyone; otherwise settings.manage)',
  access: 'operator',
  permission: 'settings.manage',
  openInDevelopment: true,
  responses: { 200: openApiObject },
  async handle({ rt }) {
    return { body: consoleDocument({ helpdeskEnabled: rt.config.Helpdesk.Enabled, development: rt.config.Hosting.Environment === 'Development', publicOrigin: rt.config.Hosting.PublicOrigin, accessHeader: rt.config.Authentication.Access.Header }) };
  },
});

/** The console's document: every route of its table and this one (the same the route serves). */
export const consoleDocument = (opts: { helpdeskEnabled: boolean; development?: boolean; publicOrigin?: string; accessHeader?: string }): OpenApiDocument =>
  consoleOpenApiDocument([...consoleRouteGroups(), { tag: 'API description', description: 'This document', routes: [document] }], { ...opts, version: pkg.version });

export const routes = [document];
export const handler = consoleHandler(routes);
