import { z } from 'zod';
import { plainText } from '@lib/plain-text';
import { fleetHandler } from '@lib/fleet/http';
import { localLogin } from '@lib/fleet/local-admin';
import { defineFleetRoute } from '@lib/fleet/route';
import * as A from '@lib/api/fleet/answers';

const login = defineFleetRoute({
  method: 'POST',
  path: '/api/auth/login',
  summary: 'Local administrator login (break-glass); answers a short-lived bearer token',
  access: 'anonymous',
  body: z.object({ username: plainText().min(1).max(64), password: z.string().min(1).max(256) }),
  responses: { 200: A.localLogin },
  errors: { 401: ['invalid_credentials'], 429: ['too_many_attempts'] },
  async handle({ rt, body, sourceIp, correlationId }) {
    return { body: await localLogin(rt, body, { sourceIp, correlationId }) };
  },
});

const me = defineFleetRoute({
  method: 'GET',
  path: '/api/auth/me',
  summary: 'The caller: { username, method, admin, scope }',
  access: 'signed-in',
  responses: { 200: A.me },
  async handle({ access }) {
    const { identity, scope } = access!;
    return { body: { username: identity.username, method: identity.method, admin: identity.admin, scope } };
  },
});

export const routes = [login, me];
export const handler = fleetHandler(routes);
