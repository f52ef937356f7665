import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

// The answer of every route and every error: JSON (or a route's text), never cached, with the
// request's correlation id. The security headers are added by browserDefaults.
export interface HttpResult {
  status?: number;
  body?: unknown;
  /** raw text body (e.g. CSV), sent with `contentType` */
  text?: string;
  contentType?: string;
  cookies?: string[];
  headers?: Record<string, string>;
}

export function httpResponse(result: HttpResult, correlationId: string): APIGatewayProxyStructuredResultV2 {
  const text = result.text !== undefined;
  return {
    statusCode: result.status ?? 200,
    headers: {
      'content-type': text ? (result.contentType ?? 'text/plain; charset=utf-8') : 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
      'x-correlation-id': correlationId,
      ...result.headers,
    },
    body: text ? result.text : result.body === undefined ? '' : JSON.stringify(result.body),
    ...(result.cookies ? { cookies: result.cookies } : {}),
  };
}
