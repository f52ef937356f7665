import type { APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { consoleRoutes } from '../../functions/console/all-routes';
import { createHttpHandler } from '../../lib/http/console';
import type { ConsoleRuntime } from '../../lib/runtime';
import { httpEvent } from './http-event';
import { signedIn, steppedUp } from './stack';

// The console's handlers run in the test's process with a runtime of the test's own (its
// configuration, its store), driven like a browser: cookies and the CSRF token kept (issue 31:
// rules that only another configuration shows, without restarting the shared stack).

const ALL_ROUTES = Object.entries(consoleRoutes)
  .filter(([group]) => group !== 'health')
  .flatMap(([, routes]) => routes as any[]);

export interface Answer {
  status: number;
  body: any;
}
/** A browser-like client of the console's handlers run in this process (cookies, CSRF token). */
export class InProcess {
  private cookies = new Map<string, string>();
  csrf?: string;
  private readonly handler: (e: unknown) => Promise<APIGatewayProxyStructuredResultV2>;
  constructor(readonly rt: ConsoleRuntime) {
    this.handler = createHttpHandler(ALL_ROUTES, () => rt) as never;
  }
  /** Carry a session of the running stack (the same store behind both). */
  adopt(cookie: string, csrf: string) {
    this.cookies.set('__Host-hdc', cookie);
    this.csrf = csrf;
    return this;
  }
  async request(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
    const [p, qs] = url.split('?');
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) h['content-type'] = 'application/json';
    if (this.csrf && method !== 'GET') h['x-csrf-token'] = this.csrf;
    const event = httpEvent(method, p, { headers: h, body: body === undefined ? undefined : JSON.stringify(body), query: qs ? Object.fromEntries(new URLSearchParams(qs)) : undefined });
    (event as { rawQueryString: string }).rawQueryString = qs ?? '';
    const r = await this.handler(event);
    const setCookies = [...(r.cookies ?? []), ...[(r.headers ?? {})['set-cookie'] ?? []].flat().map(String)];
    for (const c of setCookies) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      if (value === '' || attrs.some((a) => /^\s*max-age=0\s*$/i.test(a))) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { status: r.statusCode ?? 0, body: r.body ? JSON.parse(r.body) : undefined };
  }
  get = (url: string, headers?: Record<string, string>) => this.request('GET', url, undefined, headers);
  post = (url: string, body: unknown = {}, headers?: Record<string, string>) => this.request('POST', url, body, headers);
  async antiforgery() {
    const r = await this.get('/api/auth/antiforgery');
    if (r.status !== 200) throw new Error(`antiforgery: ${r.status} ${JSON.stringify(r.body)}`);
    this.csrf = r.body.token;
  }
}
/** An in-process client carrying the stack session of a seeded operator (its CSRF token too; the same store behind both). */
export async function asOperator(rt: ConsoleRuntime, username: string, opts: { stepUp?: boolean } = {}): Promise<InProcess> {
  const c = opts.stepUp ? await steppedUp(username) : await signedIn(username);
  return new InProcess(rt).adopt(c.cookie('__Host-hdc')!, c.csrf!);
}
