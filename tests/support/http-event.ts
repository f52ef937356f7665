import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface HttpEventOptions {
  headers?: Record<string, string>;
  body?: string;
  isBase64Encoded?: boolean;
  query?: Record<string, string>;
  sourceIp?: string;
}

/** An API Gateway HTTP API (payload 2.0) event, as the gateway hands it to a function in process. */
export const httpEvent = (method: string, rawPath: string, opts: HttpEventOptions = {}): APIGatewayProxyEventV2 =>
  ({
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString: '',
    headers: opts.headers ?? {},
    queryStringParameters: opts.query,
    body: opts.body,
    isBase64Encoded: opts.isBase64Encoded ?? false,
    requestContext: { http: { method, path: rawPath, sourceIp: opts.sourceIp ?? '192.0.2.9', protocol: 'HTTP/1.1', userAgent: 'fuzz' } },
  }) as unknown as APIGatewayProxyEventV2;
