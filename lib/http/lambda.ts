import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { runtime } from '../runtime';
import { browserDefaults } from './browser';
import { consoleBrowserPolicy, createHttpHandler } from './handler';
import type { Route } from './route';

/** A console Lambda handler for a group of routes: the shared pipeline inside one middy chain. */
export function consoleHandler(routes: Route<any, any, any>[]) {
  return middy<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>()
    .use(browserDefaults(() => consoleBrowserPolicy(runtime().config)))
    .handler(createHttpHandler(routes, runtime));
}
