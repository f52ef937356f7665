import { z } from 'zod';
import { fleetHandler } from '@lib/fleet/http';
import { fleetOpenApiDocument } from '@lib/fleet/openapi';
import { defineFleetRoute, type FleetRoute } from '@lib/fleet/route';
import type { OpenApiDocument } from '@lib/http/openapi';
import { fleetRouteGroups } from './all-routes';
import pkg from '../../package.json';

// The fleet plane's own description (issue 30): any signed-in caller reads it (an integrator
// generating a client holds a token already); anonymous 401 like every other route.
const openApiObject = z.looseObject({ openapi: z.literal('3.1.0'), info: z.looseObject({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }).meta({ id: 'OpenApiDocument' });

const document: FleetRoute<undefined, undefined, undefined, unknown, { 200: typeof openApiObject }> = defineFleetRoute({
  method: 'GET',
  path: '/openapi/v1.json',
  summary: 'OpenAPI 3.1 description of this API (any signed-in caller)',
  access: 'signed-in',
  responses: { 200: openApiObject },
  async handle({ rt }) {
    return { body: fleetDocument({ publicOrigin: rt.config.FLEET_PUBLIC_ORIGIN, accessHeader: rt.config.ACCESS_JWT_HEADER }) };
  },
});

/** The fleet plane's document: every route of its table and this one (the same the route serves). */
export const fleetDocument = (opts: { publicOrigin?: string; accessHeader?: string } = {}): OpenApiDocument =>
  fleetOpenApiDocument([...fleetRouteGroups(), { tag: 'API description', description: 'This document', routes: [document] }], { ...opts, version: pkg.version });

export const routes = [document];
export const handler = fleetHandler(routes);
