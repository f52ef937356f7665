import { createHmac } from 'node:crypto';
import { applyChannelInput, adaptiveCardMessage, chatText, fleetSignature, ntfyHeaders, renderChannelRequest, standardSignature } from '../../../lib/channels';
import { openString } from '../../../lib/crypto/seal';
import { isDecidedClear } from '../../../lib/fleet/alerts/evaluate';
import { certificateSeverity, evaluateRules, type RuleInput } from '../../../lib/fleet/alerts/rules';
import { nextPollState, witnessCheck, type ConsolePollState } from '../../../lib/fleet/poll/state';
import type { ConsoleRecord } from '../../../lib/fleet/consoles';
import type { PollResult } from '../../../lib/fleet/poll/status';

const DAY = 86_400_000;
const now = Date.parse('2026-11-25T12:00:00Z');
const c1: ConsoleRecord = { id: 'c1', clientCode: 'acme', url: 'https://acme.test', sealedToken: 'x', createdAt: '', updatedAt: '' };
const H = (n: number) => n.toString(16).padStart(64, '0');
const okStatus = (over: Partial<any> = {}) => ({ instance: { version: '1.0.0' }, health: { status: 'healthy' }, audit: { chain: 'ok', failedLogins24h: 0, head: { seq: 10, hash: H(10) } }, directory: { dcs: [{ name: 'dc1', url: 'ldaps://dc1.corp.test:636', state: 'up' }] }, ...over });
const ok = (status = okStatus()): PollResult => ({ ok: true, at: new Date(now).toISOString(), ms: 5, status: status as any });
const fail = (error = 'timeout'): PollResult => ({ ok: false, at: new Date(now).toISOString(), ms: 5, error: error as any });

const input = (states: ConsolePollState[], over: Partial<RuleInput> = {}): RuleInput => ({ now, roundId: 'r2', settings: { failedLoginsThreshold: 20 }, consoles: [c1], states: new Map(states.map((s) => [s.consoleId, s])), ...over });
const keys = (i: RuleInput) => evaluateRules(i).held.map((h) => `${h.kind}:${h.key}:${h.severity}`);

describe('console rules', () => {
  it('no decision without data: never polled, or not polled this round', () => {
    expect(evaluateRules(input([])).held).toEqual([]);
    const st = nextPollState(undefined, 'c1', 'r1', fail());
    const out = evaluateRules(input([st]));
    expect(out.held).toEqual([]);
    expect(out.clearKeys).toEqual([]);
  });
  it('one failure changes nothing, the second consecutive one fires console_down', () => {
    const s1 = nextPollState(undefined, 'c1', 'r2', fail());
    const o1 = evaluateRules(input([s1]));
    expect(o1.held).toEqual([]);
    expect(isDecidedClear('console:c1:down', o1)).toBe(false);
    const s2 = nextPollState({ ...s1, roundId: 'r1' }, 'c1', 'r2', fail('tls_error'));
    expect(keys(input([s2]))).toEqual(['console_down:console:c1:down:critical']);
    // an unreachable console keeps its audit / DC / logins state: nothing decided clear
    expect(isDecidedClear('console:c1:audit', evaluateRules(input([s2])))).toBe(false);
  });
  it('health down or unhealthy, DCs, sign-ins above the threshold, audit broken', () => {
    const s = nextPollState(undefined, 'c1', 'r2', ok(okStatus({ health: { status: 'unhealthy' }, audit: { chain: 'broken', failedLogins24h: 21 }, directory: { dcs: [{ name: 'dc2', url: 'ldaps://DC2.corp.test', state: 'down' }, { name: 'dc1', state: 'up' }] } })));
    expect(keys(input([s])).sort()).toEqual(['console_audit_broken:console:c1:audit:critical', 'console_dc_down:console:c1:dc:dc2.corp.test:warning', 'console_down:console:c1:down:critical', 'failed_logins_spike:console:c1:logins:warning']);
    const healthy = evaluateRules(input([nextPollState(undefined, 'c1', 'r2', ok())]));
    expect(healthy.held).toEqual([]);
    for (const k of ['console:c1:down', 'console:c1:audit', 'console:c1:dc:dc2.corp.test', 'console:c1:logins']) expect(isDecidedClear(k, healthy)).toBe(true);
    expect(keys(input([nextPollState(undefined, 'c1', 'r2', ok(okStatus({ audit: { chain: 'ok', failedLogins24h: 20 } })))]))).toEqual([]);
    expect(keys(input([nextPollState(undefined, 'c1', 'r2', ok(okStatus({ audit: { chain: 'ok', failedLogins24h: 6 } })))], { settings: { failedLoginsThreshold: 5 } }))).toEqual(['failed_logins_spike:console:c1:logins:warning']);
  });
  it('certificate: under 14 days warning, under 3 days or expired critical, read even when the poll failed', () => {
    expect(certificateSeverity(new Date(now + 20 * DAY).toISOString(), now)).toBeUndefined();
    expect(certificateSeverity(new Date(now + 10 * DAY).toISOString(), now)).toBe('warning');
    expect(certificateSeverity(new Date(now + 2 * DAY).toISOString(), now)).toBe('critical');
    expect(certificateSeverity(new Date(now - DAY).toISOString(), now)).toBe('critical');
    const s = nextPollState(undefined, 'c1', 'r2', { ...fail('tls_error'), cert: { validTo: new Date(now - DAY).toISOString(), validFrom: '', subject: 'CN=acme', fingerprint256: '' } });
    expect(keys(input([s]))).toEqual(['certificate_expiring:console:c1:cert:critical']);
  });
  it('proxy_unreachable: client proxies only; an unreadable cluster decides nothing', () => {
    const p = (id: string, kind: string, networkStatus: string, clientCodes: string[]) => ({ id, hostname: id, kind, networkStatus, clientCodes, clientCode: clientCodes[0] ?? null, lastSeen: null }) as any;
    const out = evaluateRules(input([], { proxies: [p('g1', 'gateway', 'unreachable', ['acme']), p('a1', 'auth', 'unreachable', []), p('s1', 'ssh', 'unreachable', []), p('g2', 'gateway', 'online', ['acme'])] }));
    expect(out.held.map((h) => h.key)).toEqual(['proxy:g1']);
    expect(isDecidedClear('proxy:g2', out)).toBe(true);
    expect(isDecidedClear('proxy:gone', out)).toBe(true);
    expect(isDecidedClear('proxy:g2', evaluateRules(input([])))).toBe(false);
  });
  it('identity: file under 24 h warns; Machine ID only once expired, and not renewed within 2 x interval', () => {
    const soon = new Date(now + 3600_000).toISOString();
    expect(keys(input([], { identity: { mode: 'identity_file', expiresAt: soon, renewalIntervalMs: 20 * 60_000 } }))).toEqual(['identity_expiring:identity:warning']);
    expect(keys(input([], { identity: { mode: 'machine_id', expiresAt: soon, modifiedAt: new Date(now - 5 * 60_000).toISOString(), renewalIntervalMs: 20 * 60_000 } }))).toEqual([]);
    expect(keys(input([], { identity: { mode: 'machine_id', expiresAt: new Date(now - 1).toISOString(), modifiedAt: new Date(now - 41 * 60_000).toISOString(), renewalIntervalMs: 20 * 60_000 } })).sort()).toEqual(['identity_expiring:identity:critical', 'identity_not_renewed:identity:renewal:warning']);
    expect(keys(input([], { identity: { mode: 'machine_id', modifiedAt: null, renewalIntervalMs: 20 * 60_000 } }))).toEqual(['identity_not_renewed:identity:renewal:warning']);
  });
});

describe('audit witness', () => {
  const audit = (seq: number, hash: string, witness?: { seq: number; hash: string | null }) => ({ chain: 'ok', head: { seq, hash }, ...(witness ? { witness } : {}) }) as any;
  it('accepts a chain that extends the witnessed head, or whose witnessed row was purged', () => {
    expect(witnessCheck({ seq: 10, hash: H(10) }, audit(12, H(12), { seq: 10, hash: H(10) })).rewritten).toBe(false);
    expect(witnessCheck({ seq: 10, hash: H(10) }, audit(12, H(12), { seq: 10, hash: null })).rewritten).toBe(false);
    expect(witnessCheck(undefined, audit(1, H(1))).rewritten).toBe(false);
  });
  it('catches a rolled-back head, a different head at the same seq, a different hash at the witnessed seq', () => {
    expect(witnessCheck({ seq: 10, hash: H(10) }, audit(9, H(9))).rewritten).toBe(true);
    expect(witnessCheck({ seq: 10, hash: H(10) }, audit(10, H(99))).rewritten).toBe(true);
    expect(witnessCheck({ seq: 10, hash: H(10) }, audit(12, H(12), { seq: 10, hash: H(98) })).rewritten).toBe(true);
  });
  it('keeps the evidence: the witness stops moving and console_audit_broken holds while the console reports ok', () => {
    const s1 = nextPollState(undefined, 'c1', 'r1', ok());
    expect(s1.witness).toMatchObject({ seq: 10, hash: H(10) });
    const s2 = nextPollState(s1, 'c1', 'r2', ok(okStatus({ audit: { chain: 'ok', failedLogins24h: 0, head: { seq: 11, hash: H(11) }, witness: { seq: 10, hash: H(77) } } })));
    expect(s2.rewrite).toMatchObject({ witnessed: { seq: 10, hash: H(10) }, reported: { seq: 10, hash: H(77) } });
    const s3 = nextPollState({ ...s2, roundId: 'r2' }, 'c1', 'r3', ok(okStatus({ audit: { chain: 'ok', failedLogins24h: 0, head: { seq: 12, hash: H(12) } } })));
    expect(s3.witness).toMatchObject({ seq: 10 });
    expect(keys({ ...input([s3]), roundId: 'r3' })).toEqual(['console_audit_broken:console:c1:audit:critical']);
  });
});

describe('channels', () => {
  const key = Buffer.alloc(32, 7);
  const policy = { key, aad: 'fleet-channel', secretMin: 8 };
  it('seals url and secret; edit semantics: empty keeps, removeSecret clears, a new type needs the URL', () => {
    const { record } = applyChannelInput(undefined, { name: 'ops', type: 'webhook', url: 'https://hooks.example/x?token=abc', secret: 'sssssssss' }, policy);
    expect(record.urlOrigin).toBe('https://hooks.example');
    expect(JSON.stringify(record)).not.toMatch(/token=abc|sssssssss/);
    expect(openString(key, record.sealedUrl, `fleet-channel:${record.id}:url`)).toBe('https://hooks.example/x?token=abc');
    const kept = applyChannelInput(record, { url: '', secret: '', enabled: false }, policy);
    expect(kept.record.sealedUrl).toBe(record.sealedUrl);
    expect(kept.record.sealedSecret).toBe(record.sealedSecret);
    expect(kept.changes).toEqual({ enabled: false });
    expect(applyChannelInput(record, { removeSecret: true }, policy).changes).toEqual({ secret: 'cleared' });
    expect(() => applyChannelInput(record, { type: 'chat' }, policy)).toThrow('url_required');
    expect(() => applyChannelInput(undefined, { name: 'n', type: 'webhook', url: 'http://x.example' }, policy)).toThrow('https_required');
    expect(() => applyChannelInput(undefined, { name: 'n', type: 'webhook', url: 'https://x.example', secret: 'short' }, policy)).toThrow('validation_failed');
    expect(() => applyChannelInput(undefined, { name: 'n', type: 'ntfy', url: 'https://ntfy.example', topic: 'bad topic' }, policy)).toThrow('validation_failed');
  });
  it('signs the fleet way and the Standard Webhooks way', () => {
    expect(fleetSignature('k', 1700000000, '{}')).toBe(`sha256=${createHmac('sha256', 'k').update('1700000000.{}').digest('hex')}`);
    const secret = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    expect(standardSignature(secret, 'msg_1', 1700000000, '{}')).toBe(`v1,${createHmac('sha256', Buffer.from('0123456789abcdef0123456789abcdef')).update('msg_1.1700000000.{}').digest('base64')}`);
  });
  it('renders text with at most 30 events, the card 1.4, ntfy headers', () => {
    const events = Array.from({ length: 33 }, (_, i) => ({ event: 'fired', severity: 'critical' as const, text: `e${i}` }));
    const text = chatText('t', events);
    expect(text.split('\n')).toHaveLength(32);
    expect(text.endsWith('... and 3 more')).toBe(true);
    const card = adaptiveCardMessage('t', events.slice(0, 1)).attachments[0].content;
    expect(card).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(ntfyHeaders('t', events, 'tok')).toMatchObject({ priority: 'urgent', authorization: 'Bearer tok' });
    expect(renderChannelRequest({ type: 'ntfy', url: 'https://ntfy.example/', topic: 'ops' }, events, {}, 'fleet').url).toBe('https://ntfy.example/ops');
  });
});
