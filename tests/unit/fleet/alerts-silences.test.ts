import { applyRuleOutput } from '../../../lib/fleet/alerts/evaluate';
import { notifyTransitions, quietReason } from '../../../lib/fleet/alerts/notify';
import type { AlertDraft, RuleOutput } from '../../../lib/fleet/alerts/rules';
import { acknowledgeAlert, createSilence, deleteSilence, listSilences, silenceInputSchema, silenceMatches, type Silence } from '../../../lib/fleet/alerts/silences';
import { getActiveAlert, listHistory } from '../../../lib/fleet/alerts/store';
import { alertGroups, alertsView } from '../../../lib/fleet/alerts/view';
import { memoryStore } from '../../support/memory-store';

// Alerts you can act on (issue 29): silences match by rule, client and console; a silenced fire
// is recorded without a notification and sent once the silence ends (unless acknowledged); the
// resolve of an acknowledged or never-sent alert is recorded only; an acknowledge survives the
// rounds that refresh the alert; the view groups by rule and client.

const down = (id: string, clientCode = 'acme'): AlertDraft => ({ key: `console:${id}:down`, kind: 'console_down', severity: 'critical', clientCode, subject: `Console ${id} is down`, params: {}, link: `/consoles/${id}`, consoleId: id });
const dc = (id: string, fqdn: string): AlertDraft => ({ key: `console:${id}:dc:${fqdn}`, kind: 'console_dc_down', severity: 'warning', clientCode: 'acme', subject: `${fqdn} is down`, params: { dc: fqdn }, link: `/consoles/${id}`, consoleId: id });
const out = (held: AlertDraft[], clearKeys: string[] = []): RuleOutput => ({ held, clearKeys, clearPrefixes: [] });
const C1 = '11111111-1111-4111-8111-111111111111';
const C2 = '22222222-2222-4222-8222-222222222222';
let round = 0;
const ctx = (consoleIds = [C1, C2]) => ({ now: Date.now(), roundId: `r${++round}`, consoleIds: new Set(consoleIds) });
const notify = (store: ReturnType<typeof memoryStore>, transitions: Awaited<ReturnType<typeof applyRuleOutput>>) => notifyTransitions({ store }, transitions);
const inAnHour = () => new Date(Date.now() + 3600_000).toISOString();

describe('silence matching and input', () => {
  it('every matcher named must hold; a silence naming nothing matches nothing', () => {
    const a = { kind: 'console_down' as const, clientCode: 'acme', consoleId: C1 };
    expect(silenceMatches({ kind: 'console_down' }, a)).toBe(true);
    expect(silenceMatches({ clientCode: 'acme' }, a)).toBe(true);
    expect(silenceMatches({ consoleId: C1 }, a)).toBe(true);
    expect(silenceMatches({ kind: 'console_down', clientCode: 'globex' }, a)).toBe(false);
    expect(silenceMatches({ consoleId: C2 }, a)).toBe(false);
    expect(silenceMatches({ kind: 'proxy_unreachable' }, a)).toBe(false);
    expect(silenceMatches({}, a)).toBe(false);
    expect(silenceMatches({ clientCode: 'acme' }, { kind: 'identity_expiring', clientCode: undefined, consoleId: undefined })).toBe(false);
  });

  it('refuses a silence without matcher, ending in the past or more than 30 days ahead, without a comment or with a control character', () => {
    const ok = { kind: 'console_down', endsAt: inAnHour(), comment: 'maintenance window' };
    expect(silenceInputSchema.safeParse(ok).success).toBe(true);
    for (const bad of [
      { endsAt: inAnHour(), comment: 'x' },
      { ...ok, endsAt: new Date(Date.now() - 1000).toISOString() },
      { ...ok, endsAt: new Date(Date.now() + 31 * 86_400_000).toISOString() },
      { ...ok, endsAt: 'tomorrow' },
      { ...ok, comment: '   ' },
      { ...ok, comment: 'a\u0007b' },
      { ...ok, kind: 'not_a_rule' },
      { ...ok, clientCode: 'Not A Code' },
      { ...ok, extra: 1 },
    ])
      expect([bad, silenceInputSchema.safeParse(bad).success]).toEqual([bad, false]);
  });

  it('an ended silence reads as absent', async () => {
    const store = memoryStore();
    const s = await createSilence(store, { kind: 'console_down', endsAt: inAnHour(), comment: 'x' }, 'admin');
    expect((await listSilences(store)).map((x) => x.id)).toEqual([s.id]);
    expect(await listSilences(store, Date.now() + 2 * 3600_000)).toEqual([]);
    await deleteSilence(store, s.id);
    expect(await listSilences(store)).toEqual([]);
  });
});

describe('notifications respect silences and acknowledges', () => {
  it('quietReason: silenced fire and resolve, acknowledged resolve, never-sent resolve; otherwise sent', () => {
    const now = Date.now();
    const silence: Silence = { id: 's', consoleId: C1, endsAt: new Date(now + 60_000).toISOString(), comment: 'x', createdAt: '', createdBy: 'a' };
    const alert = { ...down(C1), firedAt: '', updatedAt: '' };
    expect(quietReason({ event: 'fired', alert }, [silence], now)).toBe('silenced');
    expect(quietReason({ event: 'resolved', alert }, [silence], now)).toBe('silenced');
    expect(quietReason({ event: 'fired', alert }, [silence], now + 120_000)).toBeUndefined(); // ended
    expect(quietReason({ event: 'fired', alert: { ...alert, ...down(C2) } }, [silence], now)).toBeUndefined();
    expect(quietReason({ event: 'resolved', alert: { ...alert, acknowledged: { by: 'a', at: '', comment: 'on it' } } }, [], now)).toBe('acknowledged');
    expect(quietReason({ event: 'resolved', alert: { ...alert, notified: false } }, [], now)).toBe('silenced');
    expect(quietReason({ event: 'resolved', alert }, [], now)).toBeUndefined();
  });

  it('a silenced fire is recorded quiet and held; it is sent once the silence ends; its resolve is then sent', async () => {
    const store = memoryStore();
    const s = await createSilence(store, { consoleId: C1, endsAt: inAnHour(), comment: 'planned reboot' }, 'admin');
    const fired = await applyRuleOutput(store, out([down(C1), down(C2)]), ctx());
    const entries = await notify(store, fired);
    expect(entries.map((e) => [e.event, e.alert?.key, e.quiet])).toEqual([
      ['fired', `console:${C1}:down`, 'silenced'],
      ['fired', `console:${C2}:down`, undefined],
    ]);
    expect((await getActiveAlert(store, `console:${C1}:down`))?.notified).toBe(false);
    expect((await getActiveAlert(store, `console:${C2}:down`))?.notified).toBeUndefined();

    // still silenced, still held: a round with no transition records nothing
    expect(await notify(store, await applyRuleOutput(store, out([down(C1), down(C2)]), ctx()))).toEqual([]);

    // the silence ends (removed): the held fire goes out once, as a fire, and is marked sent
    await deleteSilence(store, s.id);
    const released = await notify(store, await applyRuleOutput(store, out([down(C1), down(C2)]), ctx()));
    expect(released.map((e) => [e.event, e.alert?.key, e.quiet])).toEqual([['fired', `console:${C1}:down`, undefined]]);
    expect((await getActiveAlert(store, `console:${C1}:down`))?.notified).toBeUndefined();
    expect(await notify(store, await applyRuleOutput(store, out([down(C1), down(C2)]), ctx()))).toEqual([]);

    const resolved = await notify(store, await applyRuleOutput(store, out([down(C2)], [`console:${C1}:down`]), ctx()));
    expect(resolved.map((e) => [e.event, e.alert?.key, e.quiet])).toEqual([['resolved', `console:${C1}:down`, undefined]]);
  });

  it('an alert acknowledged while its fire was held is never sent, neither fire nor resolve', async () => {
    const store = memoryStore();
    const s = await createSilence(store, { kind: 'console_down', clientCode: 'acme', endsAt: inAnHour(), comment: 'x' }, 'admin');
    await notify(store, await applyRuleOutput(store, out([down(C1)]), ctx()));
    await acknowledgeAlert(store, `console:${C1}:down`, { by: 'tech-alice', at: new Date().toISOString(), comment: 'known' });
    await deleteSilence(store, s.id);
    expect(await notify(store, await applyRuleOutput(store, out([down(C1)]), ctx()))).toEqual([]);
    const resolved = await notify(store, await applyRuleOutput(store, out([], [`console:${C1}:down`]), ctx()));
    expect(resolved.map((e) => [e.event, e.quiet])).toEqual([['resolved', 'silenced']]);
  });

  it('an acknowledge keeps the alert active, survives the refresh of its values, and quiets its resolve', async () => {
    const store = memoryStore();
    await notify(store, await applyRuleOutput(store, out([dc(C1, 'dc1.acme.test')]), ctx()));
    const acked = await acknowledgeAlert(store, `console:${C1}:dc:dc1.acme.test`, { by: 'tech-alice', at: '2026-11-27T10:00:00.000Z', comment: 'DC in maintenance' });
    expect(acked?.acknowledged).toEqual({ by: 'tech-alice', at: '2026-11-27T10:00:00.000Z', comment: 'DC in maintenance' });
    // values change (a refresh, no transition): the acknowledge stays
    await notify(store, await applyRuleOutput(store, out([{ ...dc(C1, 'dc1.acme.test'), subject: 'dc1 is still down' }]), ctx()));
    const after = await getActiveAlert(store, `console:${C1}:dc:dc1.acme.test`);
    expect(after?.subject).toBe('dc1 is still down');
    expect(after?.acknowledged?.by).toBe('tech-alice');
    const resolved = await notify(store, await applyRuleOutput(store, out([], [`console:${C1}:dc:dc1.acme.test`]), ctx()));
    expect(resolved.map((e) => [e.event, e.quiet])).toEqual([['resolved', 'acknowledged']]);
    expect((await listHistory(store)).map((h) => [h.event, h.quiet])).toEqual([
      ['resolved', 'acknowledged'],
      ['fired', undefined],
    ]);
    // an alert no longer active cannot be acknowledged
    expect(await acknowledgeAlert(store, `console:${C1}:dc:dc1.acme.test`, { by: 'x', at: '', comment: 'late' })).toBeUndefined();
  });
});

describe('the alerts view', () => {
  it('groups by rule and client with counts, worst first; marks silenced alerts; scopes silences', async () => {
    const store = memoryStore();
    const g1 = 'globex';
    await applyRuleOutput(store, out([down(C1), down(C2), dc(C1, 'a.acme.test'), down('33333333-3333-4333-8333-333333333333', g1)]), ctx([C1, C2, '33333333-3333-4333-8333-333333333333']));
    const s = await createSilence(store, { consoleId: C2, clientCode: 'acme', endsAt: inAnHour(), comment: 'x' }, 'admin');
    await createSilence(store, { kind: 'proxy_unreachable', endsAt: inAnHour(), comment: 'fleet-wide' }, 'admin');
    const admin = await alertsView(store, undefined);
    expect(admin.groups.map((g) => [g.kind, g.clientCode, g.count, g.silenced])).toEqual([
      ['console_down', 'acme', 2, 1],
      ['console_down', 'globex', 1, 0],
      ['console_dc_down', 'acme', 1, 0],
    ]);
    expect(admin.active.find((a) => a.key === `console:${C2}:down`)?.silencedBy).toBe(s.id);
    expect(admin.active.find((a) => a.key === `console:${C1}:down`)?.silencedBy).toBeNull();
    expect(admin.silences).toHaveLength(2);
    const acme = await alertsView(store, new Set(['acme']));
    expect(acme.active.every((a) => a.clientCode === 'acme')).toBe(true);
    expect(acme.silences.map((x) => x.id)).toEqual([s.id]); // a fleet-wide silence is for administrators
    expect(acme.active.some((a) => 'notified' in a)).toBe(false);
  });

  it('alertGroups: critical before warning, then by count', () => {
    const a = (key: string, kind: any, severity: any, clientCode?: string) => ({ key, kind, severity, clientCode, firedAt: '2026-11-27T10:00:00Z', silencedBy: null });
    const groups = alertGroups([a('1', 'console_dc_down', 'warning', 'x'), a('2', 'console_dc_down', 'warning', 'x'), a('3', 'console_dc_down', 'warning', 'x'), a('4', 'identity_expiring', 'critical')]);
    expect(groups.map((g) => [g.kind, g.clientCode, g.count])).toEqual([
      ['identity_expiring', null, 1],
      ['console_dc_down', 'x', 3],
    ]);
  });
});
