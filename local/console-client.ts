import http from 'node:http';

// A small HTTP client for the console API with a cookie jar and the CSRF header: used by the
// local starter (setup through the real route) and by the integration tests. `localAddress`
// lets a test come from another loopback address (per-address limits).
export interface HttpResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: http.IncomingHttpHeaders;
  setCookies: string[];
}

/** An answer as the client received it, for an observer (the tests' contract record). */
export interface ObservedAnswer {
  method: string;
  url: string;
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class ConsoleClient {
  /** Sees every answer of every client (the contract test: tests/support/contract-setup.ts); none by default. */
  static observer?: (answer: ObservedAnswer) => void;
  private cookies = new Map<string, string>();
  csrf?: string;

  constructor(
    readonly baseUrl: string,
    readonly localAddress?: string,
  ) {}

  private remember(setCookies: string[]) {
    for (const c of setCookies) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** Carry another client's session (cookies and CSRF token) to this one's origin (same store behind both). */
  adoptSession(other: ConsoleClient) {
    this.cookies = new Map(other.cookies);
    this.csrf = other.csrf;
  }

  cookie(name: string) {
    return this.cookies.get(name);
  }
  setCookie(name: string, value: string | undefined) {
    if (value === undefined) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }

  request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    if (payload !== undefined) {
      h['content-type'] = 'application/json';
      // Node sends a DELETE body without chunked encoding: without a length the server sees none
      h['content-length'] = String(Buffer.byteLength(payload));
    }
    if (this.csrf && method !== 'GET' && !Object.keys(h).some((k) => k.toLowerCase() === 'x-csrf-token')) h['x-csrf-token'] = this.csrf;
    const url = new URL(this.baseUrl + path);
    const attempt = (retried: boolean): Promise<HttpResponse<T>> => new Promise((resolve, reject) => {
      const req = http.request(
        { host: url.hostname, port: url.port, path: url.pathname + url.search, method, headers: h, localAddress: this.localAddress },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const setCookies = res.headers['set-cookie'] ?? [];
            this.remember(setCookies);
            let parsed: any;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            ConsoleClient.observer?.({ method, url: path, status: res.statusCode ?? 0, headers: res.headers, body: text });
            resolve({ status: res.statusCode ?? 0, body: parsed, text, headers: res.headers, setCookies });
          });
        },
      );
      req.on('error', (e: NodeJS.ErrnoException) => {
        // a kept-alive socket the server closed as this request went out: the server never read it,
        // so it is sent once more on a new connection (Node's documented pattern, req.reusedSocket)
        if (!retried && req.reusedSocket && e.code === 'ECONNRESET') resolve(attempt(true));
        else reject(e);
      });
      if (payload !== undefined) req.write(payload);
      req.end();
    });
    return attempt(false);
  }

  get<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('GET', path, undefined, headers);
  }
  post<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('POST', path, body ?? {}, headers);
  }
  put<T = any>(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request<T>('PUT', path, body ?? {}, headers);
  }
  delete<T = any>(path: string, headers?: Record<string, string>) {
    return this.request<T>('DELETE', path, undefined, headers);
  }

  async antiforgery(): Promise<string> {
    const r = await this.get<{ token: string }>('/api/auth/antiforgery');
    if (r.status !== 200) throw new Error(`antiforgery: ${r.status} ${r.text}`);
    this.csrf = r.body.token;
    return this.csrf;
  }

  /** Sign in (a pre-session first, for its CSRF token). */
  async login(username: string, password: string, code?: string): Promise<HttpResponse> {
    await this.antiforgery();
    const r = await this.post('/api/auth/login', { username, password, ...(code ? { code } : {}) });
    if (r.status === 200) this.csrf = r.body.csrfToken;
    return r;
  }
}
