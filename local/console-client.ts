// A small HTTP client for the console API with a cookie jar and the CSRF header: used by the
// local starter (setup through the real route) and by the integration tests.
export interface HttpResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export class ConsoleClient {
  private cookies = new Map<string, string>();
  csrf?: string;

  constructor(readonly baseUrl: string) {}

  private remember(res: Response) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const name = pair.slice(0, i).trim();
      const value = pair.slice(i + 1).trim();
      const expired = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a));
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  cookie(name: string) {
    return this.cookies.get(name);
  }
  setCookie(name: string, value: string | undefined) {
    if (value === undefined) this.cookies.delete(name);
    else this.cookies.set(name, value);
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResponse<T>> {
    const h: Record<string, string> = { ...headers };
    if (this.cookies.size) h.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (body !== undefined) h['content-type'] = 'application/json';
    if (this.csrf && method !== 'GET' && !('x-csrf-token' in h)) h['x-csrf-token'] = this.csrf;
    const res = await fetch(this.baseUrl + path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
    this.remember(res);
    const text = await res.text();
    let parsed: any = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: res.status, body: parsed, text, headers: res.headers };
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

  async antiforgery(): Promise<string> {
    const r = await this.get<{ token: string }>('/api/auth/antiforgery');
    if (r.status !== 200) throw new Error(`antiforgery: ${r.status} ${r.text}`);
    this.csrf = r.body.token;
    return this.csrf;
  }

  /** Sign in; with a TOTP generator, answers the authenticator step. */
  async login(username: string, password: string, code?: string | (() => string)): Promise<HttpResponse> {
    await this.antiforgery();
    const c = typeof code === 'function' ? code() : code;
    const r = await this.post('/api/auth/login', { username, password, ...(c ? { code: c } : {}) });
    if (r.status === 200) this.csrf = r.body.csrfToken;
    return r;
  }
}
