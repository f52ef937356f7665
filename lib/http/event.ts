import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { badRequest } from '../errors';

// Reading an HTTP API (payload 2.0) event: shared by the console's and the fleet plane's pipelines.
export const MAX_BODY = 256 * 1024;

/** A request header, case-insensitively. */
export function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const n = name.toLowerCase();
  for (const [k, v] of Object.entries(event.headers ?? {})) if (k.toLowerCase() === n) return v;
  return undefined;
}

/** The JSON body (undefined when empty): 400 `body_too_large`, 400 `invalid_json`. */
export function parseBody(event: APIGatewayProxyEventV2): unknown {
  if (!event.body) return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (raw.length > MAX_BODY) throw badRequest('body_too_large');
  try {
    return JSON.parse(raw);
  } catch {
    throw badRequest('invalid_json');
  }
}
