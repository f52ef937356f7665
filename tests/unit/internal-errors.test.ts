import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHttpHandler } from '../../lib/http/console';
import { defineRoute } from '../../lib/http/route';
import type { ConsoleRuntime } from '../../lib/runtime';
import { loadConfig } from '../../lib/config';

// An unexpected exception leaves the process as { code: internal_error, correlationId } only.
describe('internal errors', () => {
  const boom = defineRoute({
    method: 'GET',
    path: '/api/boom',
    summary: 'test',
    access: 'anonymous',
    responses: {},
    async handle() {
      throw new Error('bind failed for CN=svc-hdc-read with password Hunter2-Secret');
    },
  });
  const rt = { config: loadConfig({}).config } as unknown as ConsoleRuntime;
  const handler = createHttpHandler([boom], () => rt);
  const event = { rawPath: '/api/boom', headers: {}, requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' } } } as unknown as APIGatewayProxyEventV2;

  it('answers 500 with only a code and the correlation id, never the exception text', async () => {
    const write = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      const res = await handler(event);
      expect(res.statusCode).toBe(500);
      const body = JSON.parse(res.body!);
      expect(Object.keys(body).sort()).toEqual(['code', 'correlationId']);
      expect(body.code).toBe('internal_error');
      expect(body.correlationId).toBe(res.headers!['x-correlation-id']);
      expect(res.body).not.toContain('Hunter2');
    } finally {
      write.mockRestore();
    }
  });

  it('answers an unknown route 404 not_found', async () => {
    const res = await handler({ ...event, rawPath: '/api/nothing' } as APIGatewayProxyEventV2);
    expect([res.statusCode, JSON.parse(res.body!)]).toEqual([404, { code: 'not_found' }]);
  });
});
