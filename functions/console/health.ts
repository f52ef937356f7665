import { ping } from '@lib/store';
import { ApiError } from '@lib/errors';
import { consoleHandler } from '@lib/http/lambda';
import { defineRoute } from '@lib/http/route';

const live = defineRoute({
  method: 'GET',
  path: '/health/live',
  summary: 'The process is up (anonymous, no detail)',
  access: 'anonymous',
  async handle() {
    return { body: { status: 'ok' } };
  },
});

const ready = defineRoute({
  method: 'GET',
  path: '/health/ready',
  summary: 'The process is up and the database answers (anonymous, no detail)',
  access: 'anonymous',
  async handle({ rt }) {
    try {
      await ping(rt.store);
    } catch {
      throw new ApiError(503, 'not_ready');
    }
    return { body: { status: 'ok' } };
  },
});

export const routes = [live, ready];
export const handler = consoleHandler(routes);
