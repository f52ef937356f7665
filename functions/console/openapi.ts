import { consoleHandler } from '@lib/http/console';
import { openApiDocument } from '@lib/http/openapi';
import { defineRoute, type Route } from '@lib/http/route';
import { consoleRoutes } from './all-routes';
import pkg from '../../package.json';

const document: Route = defineRoute({
  method: 'GET',
  path: '/openapi/v1.json',
  summary: 'OpenAPI 3 description (development: anyone; otherwise settings.manage)',
  access: 'operator',
  permission: 'settings.manage',
  openInDevelopment: true,
  async handle({ rt }) {
    const all: Route[] = [...Object.values(consoleRoutes).flat(), document];
    return { body: openApiDocument(all, { helpdeskEnabled: rt.config.Helpdesk.Enabled, version: pkg.version }) };
  },
});

export const routes = [document];
export const handler = consoleHandler(routes);
