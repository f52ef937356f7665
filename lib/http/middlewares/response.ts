import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

// The answer of every route and every error: JSON (or a route's text), never cached, with the
// request's correlation id. The security headers are added by browserDefaults.
export interface HttpResult {
  status?: number;
  body?: unknown;
  /** raw text body (e.g. CSV), sent with `contentType` */
  text?: string;
  /** raw bytes (e.g. a zip), sent base64-encoded to the gateway with `contentType` */
  binary?: Buffer;
  contentType?: string;
  cookies?: string[];
  headers?: Record<string, string>;
}

export function httpResponse(result: HttpResult, correlationId: string): APIGatewayProxyStructuredResultV2 {
  const text = result.text !== undefined;
  const binary = result.binary !== undefined;
  return {
    statusCode: result.status ?? 200,
    headers: {
      'content-type': binary ? (result.contentType ?? 'application/octet-stream') : text ? (result.contentType ?? 'text/plain; charset=utf-8') : 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-correlation-id': correlationId,
      ...result.headers,
    },
    body: binary ? result.binary!.toString('base64') : text ? result.text : result.body === undefined ? '' : JSON.stringify(result.body),
    ...(binary ? { isBase64Encoded: true } : {}),
    ...(result.cookies ? { cookies: result.cookies } : {}),
  };
}
