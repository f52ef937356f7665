// A worked example of scripting the console API with a client generated from its OpenAPI document
// (docs/api.md): sign in, search a computer, read the audit of that computer.
//
//   npm install openapi-fetch && npm install -D openapi-typescript tsx
//   curl -s https://console.example.com/openapi/v1.json -b cookies.txt -o console-openapi.json
//   npx openapi-typescript console-openapi.json -o console-api.d.ts
//   HDC_CONSOLE_URL=https://console.example.com HDC_USER=op-auditor HDC_PASSWORD=... HDC_CODE=123456 \
//     npx tsx computer-audit.mts WS-STD-01
//
// It prints one JSON line per audit row of the computer, newest first.
import createClient, { type Middleware } from 'openapi-fetch';
import type { paths } from './console-api';

const base = process.env.HDC_CONSOLE_URL!;
const name = process.argv[2];
const client = createClient<paths>({ baseUrl: base });

// The session: the cookie the console sets (__Host-hdc) goes with every request, and its CSRF
// token with every POST, PUT and DELETE (the document declares both: the session and csrf
// security schemes, and the sign-in's own parameters).
let session = '';
let csrf = '';
const sessionCookie: Middleware = {
  onRequest({ request }) {
    if (session) request.headers.set('cookie', `__Host-hdc=${session}`);
    if (csrf && request.method !== 'GET') request.headers.set('x-csrf-token', csrf);
    return request;
  },
  onResponse({ response }) {
    const set = /^__Host-hdc=([^;]*)/.exec(response.headers.get('set-cookie') ?? '');
    if (set) session = set[1];
    return response;
  },
};
client.use(sessionCookie);
const signInParams = () => ({ header: { 'X-CSRF-TOKEN': csrf }, cookie: { '__Host-hdc': session } });

// 1. An anonymous pre-session and its CSRF token, then the sign-in (password and authenticator code).
const pre = await client.GET('/api/auth/antiforgery');
if (!pre.data) throw new Error(`antiforgery: ${pre.response.status}`);
csrf = pre.data.token;
const signIn = await client.POST('/api/auth/login', {
  params: signInParams(),
  body: { username: process.env.HDC_USER!, password: process.env.HDC_PASSWORD!, code: process.env.HDC_CODE },
});
if (!signIn.data) throw new Error(`sign-in refused: ${signIn.response.status} ${signIn.error?.code}`);
csrf = signIn.data.csrfToken;

// 2. The computer: a search in the operator's scope (computers.read).
const found = await client.GET('/api/computers', { params: { query: { q: name } } });
if (!found.data) throw new Error(`search: ${found.response.status} ${found.error?.code}`);
const computer = found.data.items.find((c) => c.name.toLowerCase() === name.toLowerCase());
if (!computer) throw new Error(`no computer named ${name} in scope`);

// 3. Its audit: the rows whose target is its objectGUID (audit.read), page by page.
let cursor: string | undefined;
do {
  const page = await client.GET('/api/audit/objects/{id}', { params: { path: { id: computer.id }, query: { limit: 100, cursor } } });
  if (!page.data) throw new Error(`audit: ${page.response.status} ${page.error?.code}`);
  for (const row of page.data.items) console.log(JSON.stringify({ at: row.at, event: row.event, outcome: row.outcome, actor: row.actor?.name, reason: row.reason }));
  cursor = page.data.cursor;
} while (cursor);

// 4. Sign out (the session ends; 204).
await client.POST('/api/auth/logout', { params: signInParams() });
