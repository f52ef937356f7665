import fs from 'node:fs';
import path from 'node:path';
import { REQUIRES } from '../../lib/authz/rights';
import { say, WORDS } from '../../web/console/src/words';

// Every error code the API can answer has words in the web app (web/console/src/words.ts): a code
// thrown in lib/ or functions/ without them would reach a person as a bare code.
const ROOT = path.resolve(__dirname, '../..');
const THROWN = [
  // badRequest('x'), forbidden('x', ...), conflict('x'), tooMany('x'), unavailable('x'), unauthorized('x')
  /\b(?:badRequest|unauthorized|forbidden|conflict|tooMany|unavailable)\(\s*'([a-z0-9_:.]+)'/g,
  // new ApiError(403, 'x')
  /new ApiError\(\s*\d{3},\s*'([a-z0-9_:.]+)'/g,
  // status maps of the password service's answers: x: [409, 'x']
  /\[\s*\d{3},\s*'([a-z0-9_:.]+)'\s*\]/g,
  // validation codes carried by zod issues: params: { code: 'x' }
  /params:\s*\{\s*code:\s*'([a-z0-9_:.]+)'/g,
];

function files(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : /\.ts$/.test(e.name) ? [p] : [];
  });
}

const codes = new Map<string, string>();
for (const f of [...files(path.join(ROOT, 'lib')), ...files(path.join(ROOT, 'functions'))]) {
  const text = fs.readFileSync(f, 'utf8');
  for (const re of THROWN) for (const m of text.matchAll(re)) if (!codes.has(m[1])) codes.set(m[1], path.relative(ROOT, f));
}

// the role editor's prerequisite codes are built from the permission they need (lib/authz/rights.ts)
for (const needed of Object.values(REQUIRES)) codes.set(`${needed!.replace(/\./g, '_')}_required`, 'lib/authz/rights.ts');

test('the scan finds the codes it should (the regular expressions still match the code base)', () => {
  for (const c of ['strict_reauth_required', 'rate_limited', 'laps_encrypted_unsupported', 'approval_required', 'self_approval', 'not_found']) expect(codes.has(c)).toBe(true);
  expect(codes.size).toBeGreaterThan(80);
});

test('every API error code has words in web/console/src/words.ts', () => {
  const missing = [...codes].filter(([c]) => !WORDS[c] && !WORDS[c.split(':')[0]]).map(([c, f]) => `${c} (${f})`);
  expect(missing).toEqual([]);
});

test('the words are sentences a person reads, not codes', () => {
  for (const [code, words] of Object.entries(WORDS)) expect([code, /^[A-Z].*[.!?)]$/.test(words) && !words.includes('_')]).toEqual([code, true]);
});

test('a LAPS rate-window refusal tells when the oldest read leaves the window', () => {
  const refusal = (retryAfterSeconds?: number) => ({ status: 429, code: 'rate_limited', body: { code: 'rate_limited', ...(retryAfterSeconds ? { retryAfterSeconds } : {}) } });
  expect(say(refusal(541))).toBe(`${WORDS.rate_limited} Try again in 10 min.`);
  expect(say(refusal(45))).toBe(`${WORDS.rate_limited} Try again in 45 s.`);
  expect(say(refusal())).toMatch(/within 10 minutes/);
});
