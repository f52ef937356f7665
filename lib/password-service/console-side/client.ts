import http from 'node:http';
import https from 'node:https';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { processEnvironment, type Environment } from '../../config/environment';
import { ApiError, overloaded } from '../../errors';
import type { HopTimes } from '../../hop-times';
import { logger } from '../../log';
import { loadLinkKey, signRequest, type ServiceRequest, type ServiceResponse } from '../link';

// The console's side of the internal link: a Lambda invoke of the password service (locally
// serverless-offline's Lambda endpoint). The console never holds the LAPS or reset account.
const clients = new Map<string, LambdaClient>();

function client(env: Environment): LambdaClient {
  const endpoint = env.HDC_LAMBDA_ENDPOINT ?? '';
  let c = clients.get(endpoint);
  if (!c) {
    // a kept connection is closed here after 4 s idle, before the other side's 5 s (Node's default, as
    // serverless-offline's Lambda endpoint): a request sent on a socket the server is closing at that
    // moment hangs up (never retried: maxAttempts 1, a password operation is not sent twice)
    const requestHandler = { httpAgent: new http.Agent({ keepAlive: true, timeout: 4000 }), httpsAgent: new https.Agent({ keepAlive: true, timeout: 4000 }) };
    // cacheMiddleware: the SDK builds the invoke's middleware stack once, not on every call (only
    // plain InvokeCommands are sent here, none with middleware of its own)
    const common = { maxAttempts: 1, requestHandler, cacheMiddleware: true };
    c = new LambdaClient(endpoint ? { endpoint, region: env.AWS_REGION ?? 'eu-west-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, ...common } : common);
    clients.set(endpoint, c);
  }
  return c;
}

export async function callPasswordService(request: ServiceRequest, env: Environment = processEnvironment(), hops?: HopTimes): Promise<ServiceResponse> {
  const fn = env.HDC_PASSWORD_SERVICE_FUNCTION;
  if (!fn) throw new ApiError(503, 'laps_unavailable');
  try {
    const t0 = performance.now();
    const envelope = signRequest(await loadLinkKey(env), request);
    if (hops) hops.hops['console.linkSign'] = Number((performance.now() - t0).toFixed(2));
    const out = await client(env).send(new InvokeCommand({ FunctionName: fn, Payload: Buffer.from(JSON.stringify(envelope)) }));
    if (out.FunctionError || !out.Payload) throw new Error(`password service error ${out.FunctionError ?? 'empty'}`);
    return JSON.parse(Buffer.from(out.Payload).toString('utf8')) as ServiceResponse;
  } catch (e) {
    // the service at its reserved concurrency (Lambda's throttle, or the container gateway's): an
    // overload refusal, not an outage (issue 28); the operation was not started
    if ((e as Error)?.name === 'TooManyRequestsException') throw overloaded('password_service', 1);
    logger.error('password service unreachable', { error: (e as Error).message });
    throw new ApiError(503, 'laps_unavailable');
  }
}
