import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { HttpRoute } from './service-map';

// What API Gateway's HTTP API (payload 2.0) does between a client and a function, for the
// container gateway: route selection, the event, and the result turned back into a response.

export interface MatchedRoute<T> {
  target: T;
  routeKey: string;
  pathParameters?: Record<string, string>;
}

interface Compiled<T> {
  target: T;
  route: HttpRoute;
  segments: string[];
}

/** Route selection as API Gateway's: the most specific path wins (literal > {param} > {greedy+}), then an exact method over ANY; `$default` last. */
export class RouteTable<T> {
  private readonly routes: Compiled<T>[] = [];
  private fallback?: Compiled<T>;

  add(route: HttpRoute, target: T) {
    const compiled = { target, route, segments: route.path.split('/').filter(Boolean) };
    if (route.path === '*') this.fallback = compiled;
    else this.routes.push(compiled);
  }

  match(method: string, path: string): MatchedRoute<T> | undefined {
    const parts = path.split('/').filter(Boolean);
    let best: { c: Compiled<T>; params: Record<string, string>; score: number[] } | undefined;
    for (const c of this.routes) {
      if (c.route.method !== method && c.route.method !== 'ANY') continue;
      const m = matchSegments(c.segments, parts);
      if (!m) continue;
      const score = [...m.score, c.route.method === method ? 1 : 0];
      if (!best || compareScores(score, best.score) > 0) best = { c, params: m.params, score };
    }
    if (best) {
      const hasParams = Object.keys(best.params).length > 0;
      return { target: best.c.target, routeKey: `${best.c.route.method} ${best.c.route.path}`, pathParameters: hasParams ? best.params : undefined };
    }
    return this.fallback ? { target: this.fallback.target, routeKey: '$default' } : undefined;
  }
}

function matchSegments(segments: string[], parts: string[]): { params: Record<string, string>; score: number[] } | undefined {
  const params: Record<string, string> = {};
  const score: number[] = [];
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i];
    const greedy = /^\{(\w+)\+\}$/.exec(s);
    if (greedy) {
      if (i !== segments.length - 1 || parts.length <= i) return undefined;
      params[greedy[1]] = parts.slice(i).map(decode).join('/');
      score.push(1);
      return { params, score };
    }
    if (i >= parts.length) return undefined;
    const param = /^\{(\w+)\}$/.exec(s);
    if (param) {
      params[param[1]] = decode(parts[i]);
      score.push(2);
    } else if (s === parts[i]) score.push(3);
    else return undefined;
  }
  return parts.length === segments.length ? { params, score } : undefined;
}

const decode = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

function compareScores(a: number[], b: number[]) {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d) return d;
  }
  return 0;
}

const TEXTUAL = /^(text\/|application\/(json|x-www-form-urlencoded|xml|javascript)|[^;]*\+json)/i;

/** The payload 2.0 event of one request, as API Gateway builds it (headers lower-cased and comma-joined, cookies apart, binary bodies base64). */
export function httpApiEvent(req: http.IncomingMessage, body: Buffer, matched: MatchedRoute<unknown>, sourceIp: string, receivedAt: number = Date.now()): APIGatewayProxyEventV2 {
  const url = new URL(req.url ?? '/', 'http://gateway');
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) {
    if (v === undefined || k === 'cookie') continue;
    headers[k] = Array.isArray(v) ? v.join(',') : v;
  }
  const cookies = (req.headers.cookie ?? '')
    .split(';')
    .map((c) => c.trim())
    .filter(Boolean);
  const query: Record<string, string> = {};
  for (const [k, v] of url.searchParams) query[k] = k in query ? `${query[k]},${v}` : v;
  const contentType = headers['content-type'] ?? '';
  const textual = body.length === 0 || TEXTUAL.test(contentType);
  const now = receivedAt;
  return {
    version: '2.0',
    routeKey: matched.routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: cookies.length ? cookies : undefined,
    headers,
    queryStringParameters: Object.keys(query).length ? query : undefined,
    pathParameters: matched.pathParameters,
    requestContext: {
      accountId: 'container',
      apiId: 'gateway',
      domainName: headers.host ?? 'localhost',
      domainPrefix: (headers.host ?? 'localhost').split('.')[0],
      http: { method: req.method ?? 'GET', path: url.pathname, protocol: `HTTP/${req.httpVersion}`, sourceIp, userAgent: headers['user-agent'] ?? '' },
      requestId: randomUUID(),
      routeKey: matched.routeKey,
      stage: '$default',
      time: new Date(now).toUTCString(),
      timeEpoch: now,
    },
    body: body.length ? (textual ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: body.length > 0 && !textual,
  };
}

export interface GatewayResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** A function's result as API Gateway answers it: a structured result as given, anything else as a 200 JSON body. */
export function httpApiResponse(result: unknown): GatewayResponse {
  const structured = result && typeof result === 'object' && 'statusCode' in (result as object);
  if (!structured) {
    const text = typeof result === 'string' ? result : JSON.stringify(result ?? null);
    return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(text) };
  }
  const r = result as APIGatewayProxyStructuredResultV2;
  const headers: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(r.headers ?? {})) headers[k.toLowerCase()] = String(v);
  if (r.cookies?.length) headers['set-cookie'] = r.cookies;
  const body = r.body === undefined ? Buffer.alloc(0) : r.isBase64Encoded ? Buffer.from(r.body, 'base64') : Buffer.from(r.body);
  return { status: r.statusCode ?? 200, headers, body };
}
